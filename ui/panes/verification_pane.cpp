#include "ui/panes/verification_pane.h"

#include <QHeaderView>
#include <QScrollArea>
#include <QVBoxLayout>
#include <algorithm>

#include "core/verify/flag_text.h"
#include "core/verify/report_text.h"
#include "core/verify/reward_formula.h"
#include "ui/workbench/reward_view.h"
#include "ui/workbench/verdict_style.h"

namespace crucible::ui {

namespace {
constexpr int kLineRole = Qt::UserRole + 1;

QString bannerOf(const std::optional<Evaluation>& e) {
  if (!e) return QObject::tr("NOT VERIFIED  press Verify (F5)");
  switch (e->verdict) {
    case Verdict::Verified:
      return QObject::tr("VERIFIED  correct, no cheating flag");
    case Verdict::Incorrect:
      return e->error ? QObject::tr("INCORRECT  the candidate failed while it ran")
                      : QObject::tr("INCORRECT  the outputs do not match the reference");
    case Verdict::Cheating:
      return QObject::tr("CHEATING  at least one cheating flag was raised");
    case Verdict::Invalid:
      return QObject::tr("INVALID  not a Triton candidate");
    case Verdict::Error:
      return QObject::tr("ERROR  the evaluation could not finish");
  }
  return {};
}

// The evidence in plain words, a line per entry under the flag (nested entries stay with their
// heading); the whole of it is every row's tooltip.
void addEvidence(QTreeWidgetItem* parent, const Flag& flag) {
  const QString text = QString::fromStdString(evidenceText(flag.evidence));
  if (text.isEmpty()) return;
  const QString hover = QString::fromStdString(flagHoverText(flag));
  for (const QString& line : text.split('\n')) {
    auto* item = new QTreeWidgetItem(parent, {QString(), QString(), QString(), line});
    item->setToolTip(3, hover);
  }
}
// The preset's formulas with this candidate's numbers in them, and which preset it is.
QString formulaHtml(const Reward& stored, const Reward& shown) {
  QString html;
  const RewardPreset* preset = findRewardPreset(shown.preset);
  if (preset == nullptr) return html;
  const auto lines = rewardFormula(*preset, shown);
  const auto row = [](const RewardFormulaLine& line) {
    QString text = QString::fromStdString(line.name + " = " + line.expression).toHtmlEscaped();
    if (!line.substituted.empty() && line.substituted != line.expression)
      text += QStringLiteral(" = ") + QString::fromStdString(line.substituted).toHtmlEscaped();
    if (!line.value.empty()) text += QStringLiteral(" = <b>%1</b>").arg(line.value.c_str());
    return text;
  };
  html += QObject::tr("<b>Reward</b> scored with <b>%1</b>: %2")
              .arg(QString::fromStdString(shown.preset).toHtmlEscaped(), row(lines.back()));
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    html += QStringLiteral("<br>&nbsp;&nbsp;") + row(lines[i]);
    if (!lines[i].part.empty())
      html += QObject::tr(" <i>(credits the %1 tokens)</i>").arg(lines[i].part.c_str());
  }
  if (stored.preset != shown.preset) {
    html += QObject::tr("<br><i>verified under %1; scored again from its inputs</i>")
                .arg(QString::fromStdString(stored.preset).toHtmlEscaped());
  } else if (!shown.inputs) {
    html +=
        QObject::tr("<br><i>its inputs were not kept (an older evaluation): it stays under %1</i>")
            .arg(QString::fromStdString(shown.preset).toHtmlEscaped());
  }
  return html;
}
}  // namespace

VerificationPane::VerificationPane(WorkbenchController* controller, RunStatus* status,
                                   QWidget* parent)
    : QWidget(parent), controller_(controller), status_(status) {
  banner_ = new QLabel;
  banner_->setMargin(6);
  QFont bold = banner_->font();
  bold.setBold(true);
  bold.setPointSizeF(bold.pointSizeF() * 1.15);
  banner_->setFont(bold);
  banner_->setWordWrap(true);  // the pane may be narrow: wrap rather than widen it
  timing_ = new QLabel;
  timing_->setWordWrap(true);
  timing_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  reward_ = new RewardChart;
  rewardFormula_ = new QLabel;
  rewardFormula_->setWordWrap(true);
  rewardFormula_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  flags_ = new QTreeWidget;
  flags_->setHeaderLabels({tr("Severity"), tr("Flag"), tr("Line"), tr("Message / evidence")});
  // The short columns fit their contents ("warning", the longest flag id); the message takes
  // the rest.
  flags_->header()->setStretchLastSection(true);
  for (int column = 0; column < 3; ++column)
    flags_->header()->setSectionResizeMode(column, QHeaderView::ResizeToContents);
  // Long messages are elided (their full text is the tooltip) rather than scrolled sideways.
  flags_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  error_ = new ErrorPicture;

  auto* content = new QWidget;
  auto* layout = new QVBoxLayout(content);
  layout->addWidget(banner_);
  layout->addWidget(timing_);
  layout->addWidget(reward_);
  layout->addWidget(rewardFormula_);
  layout->addWidget(new QLabel(tr("<b>Flags</b>")));
  layout->addWidget(flags_);
  layout->addWidget(error_);
  layout->addStretch();
  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(scroll);

  connect(controller_, &WorkbenchController::currentChanged, this, &VerificationPane::showCurrent);
  connect(controller_->workbench(), &Workbench::candidateChanged, this, [this](int row) {
    if (controller_->workbench()->candidates()[row].key == controller_->currentKey()) showCurrent();
  });
  connect(controller_->workbench(), &Workbench::candidatesReset, this,
          &VerificationPane::showCurrent);
  connect(controller_, &WorkbenchController::settingsChanged, this, &VerificationPane::showCurrent);
  connect(flags_, &QTreeWidget::itemExpanded, this, &VerificationPane::fitFlagsHeight);
  connect(flags_, &QTreeWidget::itemCollapsed, this, &VerificationPane::fitFlagsHeight);
  // The banner of a candidate without a verdict says whether it is being verified now.
  connect(status_, &RunStatus::changed, this, &VerificationPane::showBanner);
  connect(flags_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
    while (item->parent()) item = item->parent();
    const int line = item->data(0, kLineRole).toInt();
    if (line > 0) emit flagLineActivated(line);
  });
  showCurrent();
}

void VerificationPane::showCurrent() {
  const CandidateEntry* c = controller_->workbench()->candidate(controller_->currentKey());
  const std::optional<Evaluation> e = c ? c->evaluation : std::nullopt;
  showBanner();
  flags_->clear();
  if (!e) {
    timing_->setText(QString());
    reward_->setReward(nullptr);
    rewardFormula_->clear();
    error_->setEvaluation(nullptr);
    return;
  }
  // torch.compile's time only where it was measured (Settings > compile baseline, and a
  // reference torch.compile can handle); then the candidate's speedup over it as well.
  const auto& t = e->timing;
  QString timing = tr("<b>Speedup</b> %1<br>reference %2 · candidate %3")
                       .arg(speedupText(*e, true), millisecondsText(t.referenceMs),
                            millisecondsText(t.candidateMs));
  if (t.compileReferenceMs) {
    // With its own range, as the speedup over eager: a speedup is never shown surer than its
    // measurement.
    const QString overCompile = e->correct && e->speedup
                                    ? QString::fromStdString(compileSpeedupSummary(*e))
                                    : speedupText(std::optional<double>());
    timing += tr("<br>torch.compile %1 · speedup over it %2")
                  .arg(millisecondsText(t.compileReferenceMs), overCompile);
  }
  if (t.rounds > 0) {
    timing += t.interleaved ? tr("<br>timed in %1 rounds in turns with the reference").arg(t.rounds)
                            : tr("<br><b>not timed in turns</b> with the reference (see flags)");
  }
  timing += tr("<br>backend %1 on %2%3")
                .arg(QString::fromStdString(e->backend).toHtmlEscaped(),
                     QString::fromStdString(e->device).toHtmlEscaped(),
                     e->sandboxed ? QString() : tr(" · <b>not sandboxed</b>"));
  if (t.threads) timing += tr(" · %n CPU thread(s), both sides", "", *t.threads);
  if (e->backend == "interpret") {
    timing += tr("<br><i>interpret timings are the interpreter's, not the kernel's speed</i>");
  }
  if (e->error) {
    timing +=
        tr("<br><b>Error</b> [%1, blame: %2] %3")
            .arg(QString::fromStdString(e->error->stage), QString::fromStdString(e->error->blame),
                 QString::fromStdString(e->error->message).toHtmlEscaped());
  }
  timing_->setText(timing);
  // Under the preset chosen in Settings, whichever the candidate was verified with.
  shownReward_ = rewardUnder(e->reward, controller_->settings().rewardPreset);
  reward_->setReward(&shownReward_);
  rewardFormula_->setText(formulaHtml(e->reward, shownReward_));
  for (const Flag& f : e->flags) {
    auto* item = new QTreeWidgetItem(
        flags_,
        {QString::fromStdString(std::string(toString(f.severity))), QString::fromStdString(f.id),
         f.line ? QString::number(*f.line) : QString(), QString::fromStdString(f.message)});
    item->setData(0, kLineRole, f.line.value_or(0));
    item->setForeground(
        0, f.severity == Severity::Cheat ? QColor(0xc5, 0x22, 0x1f) : QColor(0xb0, 0x70, 0x00));
    const QString hover = QString::fromStdString(flagHoverText(f));
    for (int column = 0; column < 4; ++column) item->setToolTip(column, hover);
    addEvidence(item, f);
  }
  if (e->flags.empty()) new QTreeWidgetItem(flags_, {QString(), tr("none")});
  // As tall as its rows (evidence folded), up to a limit: "none" needs one line, not a box.
  fitFlagsHeight();
  error_->setEvaluation(&*e);
}

void VerificationPane::fitFlagsHeight() {
  int rows = 0;
  for (int i = 0; i < flags_->topLevelItemCount(); ++i) {
    const QTreeWidgetItem* item = flags_->topLevelItem(i);
    rows += 1 + (item->isExpanded() ? item->childCount() : 0);
  }
  const int row = std::max(18, flags_->sizeHintForRow(0));
  flags_->setFixedHeight(std::min(480, flags_->header()->height() + 8 + row * rows));
}

void VerificationPane::showBanner() {
  const CandidateEntry* c = controller_->workbench()->candidate(controller_->currentKey());
  const std::optional<Evaluation> e = c ? c->evaluation : std::nullopt;
  QString text = c ? bannerOf(e) : tr("No candidate selected");
  QColor color = verdictColor(e);
  if (c && !e) {
    const auto activity = status_->activity();
    if (activity == RunStatus::Activity::Verifying && controller_->verifyingKey() == c->key) {
      text = tr("VERIFYING  %1").arg(status_->text());
      color = QColor(0x2f, 0x5f, 0x8f);
    } else if (activity == RunStatus::Activity::Generating) {
      text = tr("VERIFYING  the generation run verifies each candidate as it arrives");
      color = QColor(0x2f, 0x5f, 0x8f);
    }
  }
  if (banner_->text() == text) return;
  banner_->setText(text);
  banner_->setStyleSheet(
      QStringLiteral("QLabel { background: %1; color: white; border-radius: 3px; }")
          .arg(color.name()));
}

void VerificationPane::selectFlagAtLine(int line) {
  for (int i = 0; i < flags_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = flags_->topLevelItem(i);
    if (item->data(0, kLineRole).toInt() == line) {
      flags_->setCurrentItem(item);
      flags_->scrollToItem(item);
      return;
    }
  }
}

}  // namespace crucible::ui
