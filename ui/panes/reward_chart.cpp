#include "ui/panes/reward_chart.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <map>

#include "ui/workbench/reward_view.h"

namespace crucible::ui {

RewardChart::RewardChart(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  setReward(nullptr);
}

void RewardChart::setReward(const Reward* reward) {
  // A fresh chart each time: Qt Charts keeps stale axes around when series and axes are swapped.
  auto* c = new QChart;
  c->legend()->setAlignment(Qt::AlignBottom);
  c->setMargins(QMargins(2, 2, 2, 2));
  QChart* old = chart();
  setChart(c);
  delete old;
  bars_.clear();
  if (!reward || reward->components.empty()) {
    c->setTitle(tr("Reward: not verified yet"));
    setFixedHeight(60);
    return;
  }
  // Horizontal bars, one row per component: the names stay readable in a narrow pane.
  setFixedHeight(110 + 26 * static_cast<int>(reward->components.size()));
  c->setTitle(tr("Reward (%1) = %2")
                  .arg(QString::fromStdString(reward->preset),
                       reward->total ? QString::number(*reward->total, 'g', 4) : tr("n/a")));
  // One bar set per part, so that a hierarchical preset shows plan and code in two colours.
  std::map<std::string, QBarSet*> sets;
  QStringList categories;
  for (const auto& component : reward->components) {
    categories.prepend(QString::fromStdString(component.name));  // the axis runs bottom-up
    bars_.append({QString::fromStdString(component.name), component.value});
  }
  double low = 0, high = 1;
  for (std::size_t i = 0; i < reward->components.size(); ++i) {
    const auto& component = reward->components[i];
    const std::string part = component.part.empty() ? "reward" : component.part;
    if (!sets.count(part)) {
      sets[part] = new QBarSet(rewardPartLabel(component.part));
      for (qsizetype k = 0; k < categories.size(); ++k) sets[part]->append(0);
    }
    sets[part]->replace(categories.size() - 1 - static_cast<qsizetype>(i), component.value);
    low = std::min(low, component.value);
    high = std::max(high, component.value);
  }
  auto* series = new QHorizontalStackedBarSeries;
  for (auto& [part, set] : sets) series->append(set);
  c->addSeries(series);
  auto* names = new QBarCategoryAxis;
  names->append(categories);
  auto* values = new QValueAxis;
  values->setRange(low, high * 1.1);
  values->setTickCount(5);
  c->addAxis(names, Qt::AlignLeft);
  c->addAxis(values, Qt::AlignBottom);
  series->attachAxis(names);
  series->attachAxis(values);
}

}  // namespace crucible::ui
