#include "ui/panes/reference_pane.h"

#include <QVBoxLayout>

namespace crucible::ui {

ReferencePane::ReferencePane(WorkbenchController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  title_ = new QLabel(tr("No reference: File > Open, drop a file here, or pick an example"));
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  problem_ = new QLabel;
  problem_->setWordWrap(true);
  problem_->setStyleSheet("QLabel { background: #fdecea; color: #8a1c1c; padding: 4px; }");
  problem_->hide();
  editor_ = new CodeEditor;
  editor_->setReadOnly(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(problem_);
  layout->addWidget(editor_, 1);

  Workbench* workbench = controller_->workbench();
  connect(workbench, &Workbench::referenceChanged, this, [this, workbench] {
    const auto& r = workbench->reference();
    title_->setText(tr("<b>Reference</b> %1 <span style='color:gray'>%2</span>")
                        .arg(r.name.toHtmlEscaped(), r.path.toHtmlEscaped()));
    editor_->setText(r.source);
    editor_->setFlagLines({}, {});
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
