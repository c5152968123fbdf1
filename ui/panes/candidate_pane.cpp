#include "ui/panes/candidate_pane.h"

#include <QApplication>
#include <QClipboard>
#include <QVBoxLayout>

#include "core/verify/flag_text.h"
#include "ui/workbench/candidates_model.h"

namespace crucible::ui {

CandidatePane::CandidatePane(WorkbenchController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  title_ = new QLabel;
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // cut, not widening
  editor_ = new CodeEditor;
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(editor_, 1);
  connect(controller_, &WorkbenchController::currentChanged, this, &CandidatePane::showCurrent);
  connect(controller_->workbench(), &Workbench::candidateChanged, this, [this](int row) {
    const auto& list = controller_->workbench()->candidates();
    if (row < list.size() && list[row].key == controller_->currentKey()) showCurrent();
  });
  connect(editor_, &QsciScintilla::textChanged, this, &CandidatePane::updateTitle);
  connect(editor_, &CodeEditor::flagLineClicked, this, &CandidatePane::flagLineClicked);
  showCurrent();
}

bool CandidatePane::edited() const {
  const CandidateEntry* c = controller_->workbench()->candidate(controller_->currentKey());
  return c ? c->code != editor_->text() : !editor_->text().isEmpty();
}

void CandidatePane::pasteAsCandidate() {
  const QString text = QApplication::clipboard()->text();
  if (!text.trimmed().isEmpty()) controller_->addCandidateText(text, QStringLiteral("paste"));
}

void CandidatePane::showCurrent() {
  const CandidateEntry* c = controller_->workbench()->candidate(controller_->currentKey());
  const QSignalBlocker block(editor_);
  editor_->setText(c ? c->code : QString());
  QVector<int> cheats, warnings;
  QMap<int, QString> notes;  // a line with several flags says all of them
  if (c && c->evaluation) {
    for (const Flag& f : c->evaluation->flags) {
      if (!f.line) continue;
      (f.severity == Severity::Cheat ? cheats : warnings) << *f.line;
      QString& note = notes[*f.line];
      if (!note.isEmpty()) note += QStringLiteral("\n\n");
      note += QString::fromStdString(flagHoverText(f));
    }
  }
  editor_->setFlagLines(cheats, warnings);
  editor_->setFlagNotes(notes);
  updateTitle();
}

void CandidatePane::updateTitle() {
  const Workbench& wb = *controller_->workbench();
  const CandidateEntry* c = wb.candidate(controller_->currentKey());
  QString text =
      c ? tr("<b>Candidate</b> %1 — %2")
              .arg(candidateTitle(wb, *c).toHtmlEscaped(), verdictText(c->evaluation))
        : tr("<b>Candidate</b> none: open (Ctrl+Shift+O), paste (Ctrl+Shift+V) or type one");
  if (c && edited()) text += tr(" <i>(edited: Verify makes a new candidate)</i>");
  title_->setText(text);
}

}  // namespace crucible::ui
