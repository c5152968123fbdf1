#include "ui/panes/compare_pane.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "core/util/line_diff.h"
#include "ui/workbench/candidates_model.h"
#include "ui/workbench/verdict_style.h"

namespace crucible::ui {

namespace {
QStringList metricsOf(const Workbench& wb, const CandidateEntry* c) {
  if (!c) return QStringList(8, QString());
  const auto& e = c->evaluation;
  int cheats = 0, warnings = 0;
  if (e) {
    for (const auto& f : e->flags) (f.severity == Severity::Cheat ? cheats : warnings)++;
  }
  return {candidateTitle(wb, *c),
          verdictText(e),
          e ? (e->correct ? QObject::tr("yes") : QObject::tr("no")) : QString(),
          e ? speedupText(*e, true) : QString(),
          e && e->reward.total ? QString::number(*e->reward.total, 'g', 4) : QString(),
          e ? millisecondsText(e->timing.candidateMs) : QString(),
          e ? millisecondsText(e->timing.referenceMs) : QString(),
          e ? QObject::tr("%1 cheat, %2 warning").arg(cheats).arg(warnings) : QString()};
}
}  // namespace

ComparePane::ComparePane(WorkbenchController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  leftPick_ = new QComboBox;
  rightPick_ = new QComboBox;
  left_ = new CodeEditor;
  right_ = new CodeEditor;
  left_->setReadOnly(true);
  right_->setReadOnly(true);
  metrics_ = new QTableWidget(8, 2);
  metrics_->setVerticalHeaderLabels({tr("Candidate"), tr("Verdict"), tr("Correct"), tr("Speedup"),
                                     tr("Reward"), tr("Candidate time"), tr("Reference time"),
                                     tr("Flags")});
  metrics_->setHorizontalHeaderLabels({tr("A"), tr("B")});
  metrics_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  metrics_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  metrics_->setWordWrap(true);
  metrics_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  metrics_->setMinimumWidth(260);  // "0.286x (0.27-0.30x)" on one line per side

  auto* pickers = new QHBoxLayout;
  pickers->addWidget(new QLabel(tr("A:")));
  pickers->addWidget(leftPick_, 1);
  pickers->addWidget(new QLabel(tr("B:")));
  pickers->addWidget(rightPick_, 1);
  // Code side by side at full height, the metrics beside them.
  auto* columns = new QSplitter;
  columns->addWidget(left_);
  columns->addWidget(right_);
  columns->addWidget(metrics_);
  columns->setStretchFactor(0, 2);
  columns->setStretchFactor(1, 2);
  columns->setStretchFactor(2, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(pickers);
  layout->addWidget(columns, 1);

  // Scrolling one side scrolls the other to the line that stands in the same place.
  const auto follow = [this](CodeEditor* from, CodeEditor* to, bool fromLeft) {
    connect(from, &QsciScintillaBase::SCN_UPDATEUI, this, [=, this](int updated) {
      if (syncing_ || (updated & QsciScintillaBase::SC_UPDATE_V_SCROLL) == 0) return;
      syncing_ = true;
      const int first =
          static_cast<int>(from->SendScintilla(QsciScintilla::SCI_GETFIRSTVISIBLELINE));
      to->setFirstVisibleLine(alignedLine(diff_, first, fromLeft));
      syncing_ = false;
    });
  };
  follow(left_, right_, true);
  follow(right_, left_, false);

  Workbench* wb = controller_->workbench();
  connect(wb, &Workbench::candidatesReset, this, &ComparePane::fillPickers);
  connect(wb, &Workbench::candidateAdded, this, &ComparePane::fillPickers);
  connect(wb, &Workbench::candidateChanged, this, &ComparePane::refresh);
  connect(leftPick_, &QComboBox::currentIndexChanged, this, &ComparePane::refresh);
  connect(rightPick_, &QComboBox::currentIndexChanged, this, &ComparePane::refresh);
  fillPickers();
}

void ComparePane::fillPickers() {
  const Workbench& wb = *controller_->workbench();
  for (QComboBox* box : {leftPick_, rightPick_}) {
    const QSignalBlocker block(box);
    const QVariant previous = box->currentData();
    box->clear();
    for (const auto& c : wb.candidates()) box->addItem(candidateTitle(wb, c), c.key);
    const int again = box->findData(previous);
    box->setCurrentIndex(again >= 0 ? again : (box == rightPick_ ? box->count() - 1 : 0));
  }
  refresh();
}

void ComparePane::compare(int leftKey, int rightKey) {
  {
    const QSignalBlocker a(leftPick_), b(rightPick_);
    leftPick_->setCurrentIndex(leftPick_->findData(leftKey));
    rightPick_->setCurrentIndex(rightPick_->findData(rightKey));
  }
  refresh();
}

void ComparePane::compareCurrentWithPrevious() {
  const Workbench& wb = *controller_->workbench();
  const int row = wb.rowOf(controller_->currentKey());
  if (row < 0 || wb.candidates().size() < 2) return;
  const int other = row > 0 ? row - 1 : 1;
  compare(wb.candidates()[other].key, wb.candidates()[row].key);
}

void ComparePane::refresh() {
  const Workbench& wb = *controller_->workbench();
  const CandidateEntry* a = wb.candidate(leftPick_->currentData().toInt());
  const CandidateEntry* b = wb.candidate(rightPick_->currentData().toInt());
  left_->setText(a ? a->code : QString());
  right_->setText(b ? b->code : QString());
  diff_ = diffLines(a ? a->code.toStdString() : std::string(),
                    b ? b->code.toStdString() : std::string());
  changedLeft_ = QVector<int>(diff_.onlyInLeft.begin(), diff_.onlyInLeft.end());
  changedRight_ = QVector<int>(diff_.onlyInRight.begin(), diff_.onlyInRight.end());
  left_->setChangedLines(changedLeft_);
  right_->setChangedLines(changedRight_);
  // Within a changed line and the one in its place, the words that changed.
  QVector<CodeEditor::Span> wordsLeft, wordsRight;
  for (const auto& [l, r] : diff_.changedPairs) {
    const std::string lineA = left_->text(l).toStdString(), lineB = right_->text(r).toStdString();
    const WordDiff words = diffWords(lineA, lineB);
    for (const auto& [offset, length] : words.left) wordsLeft.append({l, offset, length});
    for (const auto& [offset, length] : words.right) wordsRight.append({r, offset, length});
  }
  left_->setChangedWords(wordsLeft);
  right_->setChangedWords(wordsRight);
  const QStringList ma = metricsOf(wb, a), mb = metricsOf(wb, b);
  for (int row = 0; row < metrics_->rowCount(); ++row) {
    const bool differs = row > 0 && ma[row] != mb[row];
    for (int col = 0; col < 2; ++col) {
      auto* item = new QTableWidgetItem(col == 0 ? ma[row] : mb[row]);
      if (differs) item->setBackground(QColor(0xff, 0xf1, 0xc2));
      metrics_->setItem(row, col, item);
    }
  }
  if (a) metrics_->item(1, 0)->setIcon(verdictIcon(a->evaluation));
  if (b) metrics_->item(1, 1)->setIcon(verdictIcon(b->evaluation));
}

}  // namespace crucible::ui
