#include "ui/workbench/reward_view.h"

#include <QObject>

namespace crucible::ui {

Reward rewardUnder(const Reward& stored, const QString& preset) {
  if (preset.isEmpty() || stored.preset == preset.toStdString()) return stored;
  const RewardPreset* wanted = findRewardPreset(preset.toStdString());
  if (wanted == nullptr) return stored;
  return rescoreReward(stored, *wanted).value_or(stored);
}

QString rewardCellText(const Reward& shown, const QString& preset) {
  if (!shown.total) return QObject::tr("n/a");
  QString text = QString::number(*shown.total, 'g', 3);
  if (shown.preset != preset.toStdString()) {
    text += QStringLiteral(" (%1)").arg(QString::fromStdString(shown.preset));
  }
  return text;
}

QString rewardPartLabel(const std::string& part) {
  if (part.empty()) return QObject::tr("whole response");
  return QObject::tr("%1 tokens").arg(QString::fromStdString(part));
}

}  // namespace crucible::ui
