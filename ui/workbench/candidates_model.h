#pragma once
// The candidates table: one row per candidate of the workbench, in the order they were added.

#include <QAbstractTableModel>

#include "ui/workbench/workbench.h"

namespace crucible::ui {

class CandidatesModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Number, Origin, Verdict, Correct, Speedup, Reward, Time, ColumnCount };
  static constexpr int KeyRole = Qt::UserRole + 1;

  explicit CandidatesModel(Workbench* workbench, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  /// Marks the candidate being verified (its verdict cell says so).
  void setRunningKey(int key);
  /// The preset the Reward column scores every candidate with (its header names it).
  void setRewardPreset(const QString& preset);
  const QString& rewardPreset() const { return rewardPreset_; }

 private:
  Workbench* workbench_;
  int runningKey_ = -1;
  QString rewardPreset_;
};

/// "#3 edit of #1", "example", "model-name" for display.
QString candidateTitle(const Workbench& workbench, const CandidateEntry& entry);

}  // namespace crucible::ui
