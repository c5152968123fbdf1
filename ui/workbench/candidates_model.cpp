#include "ui/workbench/candidates_model.h"

#include "core/verify/report_text.h"
#include "ui/workbench/reward_view.h"
#include "ui/workbench/verdict_style.h"

namespace crucible::ui {

QString candidateTitle(const Workbench& workbench, const CandidateEntry& entry) {
  QString title = QStringLiteral("#%1 %2").arg(workbench.rowOf(entry.key) + 1).arg(entry.origin);
  if (!entry.model.isEmpty()) title += " · " + entry.model;
  if (entry.parentKey) {  // an edit of #1; a refinement from #1
    title += (entry.origin == "edit" ? QStringLiteral(" of #%1") : QStringLiteral(" from #%1"))
                 .arg(workbench.rowOf(*entry.parentKey) + 1);
  }
  return title;
}

CandidatesModel::CandidatesModel(Workbench* workbench, QObject* parent)
    : QAbstractTableModel(parent), workbench_(workbench) {
  connect(workbench_, &Workbench::candidatesReset, this, [this] {
    beginResetModel();
    endResetModel();
  });
  connect(workbench_, &Workbench::candidateAdded, this, [this](int row) {
    beginInsertRows({}, row, row);
    endInsertRows();
  });
  connect(workbench_, &Workbench::candidateChanged, this,
          [this](int row) { emit dataChanged(index(row, 0), index(row, ColumnCount - 1)); });
}

int CandidatesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(workbench_->candidates().size());
}

int CandidatesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

void CandidatesModel::setRunningKey(int key) {
  const int old = workbench_->rowOf(runningKey_);
  runningKey_ = key;
  for (int row : {old, workbench_->rowOf(key)}) {
    if (row >= 0) emit dataChanged(index(row, Verdict), index(row, Verdict));
  }
}

void CandidatesModel::setRewardPreset(const QString& preset) {
  if (preset == rewardPreset_) return;
  rewardPreset_ = preset;
  emit headerDataChanged(Qt::Horizontal, Reward, Reward);
  if (rowCount() > 0) emit dataChanged(index(0, Reward), index(rowCount() - 1, Reward));
}

QVariant CandidatesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= workbench_->candidates().size()) return {};
  const CandidateEntry& c = workbench_->candidates()[index.row()];
  const auto& e = c.evaluation;
  if (role == KeyRole) return c.key;
  if (role == Qt::DecorationRole && index.column() == Verdict) return verdictIcon(e);
  if (role == Qt::ToolTipRole && index.column() == Origin) return c.path;
  if (role == Qt::ToolTipRole && index.column() == Speedup && e && e->verdict == Verdict::Cheating)
    return tr("Measured %1, not credited: the candidate cheated")
        .arg(QString::fromStdString(speedupSummary(*e)));
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Number:
      return index.row() + 1;
    case Origin:
      return candidateTitle(*workbench_, c).section(' ', 1);
    case Verdict:
      return c.key == runningKey_ ? tr("verifying…") : verdictText(e);
    case Correct:
      return e ? (e->correct ? tr("yes") : tr("no")) : QString();
    case Speedup:
      return e ? speedupText(*e, false) : QString();
    case Reward:
      return e ? rewardCellText(rewardUnder(e->reward, rewardPreset_), rewardPreset_) : QString();
    case Time:
      return e ? millisecondsText(e->timing.candidateMs) : QString();
    default:
      return {};
  }
}

QVariant CandidatesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == Reward && !rewardPreset_.isEmpty()) return tr("Reward (%1)").arg(rewardPreset_);
  static const char* names[] = {"#",       "Origin / model", "Verdict", "Correct",
                                "Speedup", "Reward",         "Time"};
  return section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace crucible::ui
