#include "ui/panes/reference_pane.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QVBoxLayout>

namespace crucible::ui {

namespace {
// The path as a title shows it: the home folder as "~", the full path in the tooltip.
QString shortPath(const QString& path) {
  const QString home = QDir::homePath();
  if (home.size() > 1 && path.startsWith(home + '/')) return "~" + path.mid(home.size());
  return path;
}
}  // namespace

ReferencePane::ReferencePane(WorkbenchController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  title_ = new QLabel(tr("No reference: File > Open, drop a file here, or pick an example"));
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long path is cut
  problem_ = new QLabel;
  problem_->setWordWrap(true);
  problem_->setStyleSheet("QLabel { background: #fdecea; color: #8a1c1c; padding: 4px; }");
  problem_->hide();
  changed_ = new QWidget;
  changed_->setStyleSheet("QWidget { background: #fff4ce; }");
  changedText_ = new QLabel;
  changedText_->setWordWrap(true);
  reload_ = new QPushButton(tr("Reload"));
  reload_->setToolTip(
      tr("Open the file as it is now: a new session; the candidates so far stay "
         "stored with the old reference"));
  auto* bar = new QHBoxLayout(changed_);
  bar->setContentsMargins(4, 2, 4, 2);
  bar->addWidget(changedText_, 1);
  bar->addWidget(reload_);
  changed_->hide();
  connect(reload_, &QPushButton::clicked, controller_, &WorkbenchController::reloadReference);
  connect(controller_, &WorkbenchController::referenceChangedOnDisk, this,
          [this](const QString& path) {
            changedText_->setText(tr("%1 changed on disk. Verification still uses the text "
                                     "shown here until you reload.")
                                      .arg(QFileInfo(path).fileName()));
            changed_->show();
          });
  editor_ = new CodeEditor;
  editor_->setReadOnly(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(changed_);
  layout->addWidget(problem_);
  layout->addWidget(editor_, 1);

  Workbench* workbench = controller_->workbench();
  connect(workbench, &Workbench::referenceChanged, this, [this, workbench] {
    const auto& r = workbench->reference();
    title_->setText(tr("<b>Reference</b> %1 <span style='color:gray'>%2</span>")
                        .arg(r.name.toHtmlEscaped(), shortPath(r.path).toHtmlEscaped()));
    title_->setToolTip(r.path);
    editor_->setText(r.source);
    editor_->setFlagLines({}, {});
    changed_->hide();
  });
  connect(controller_, &WorkbenchController::referenceProblemChanged, this,
          [this](const QString& message, int line) {
            problem_->setText(message);
            problem_->setVisible(!message.isEmpty());
            editor_->setFlagLines(line > 0 ? QVector<int>{line} : QVector<int>{}, {});
            if (line > 0) editor_->showLine(line);
          });
}

}  // namespace crucible::ui
