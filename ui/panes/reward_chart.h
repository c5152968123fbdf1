#pragma once
// The reward breakdown as a bar chart: one bar per component of the preset, coloured by the part
// of the response it credits (plan or code for tritonrl's hierarchical reward).

#include <QtCharts/QChartView>

#include "core/verify/reward.h"

namespace crucible::ui {

class RewardChart : public QChartView {
  Q_OBJECT
 public:
  explicit RewardChart(QWidget* parent = nullptr);
  void setReward(const Reward* reward);  // nullptr clears
  /// Bars now shown, for tests: component name -> value.
  QList<QPair<QString, double>> bars() const { return bars_; }

 private:
  QList<QPair<QString, double>> bars_;
};

}  // namespace crucible::ui
