#pragma once
// Rewards as the workbench shows them: every one under the preset chosen in Settings, scored
// again from the inputs the evaluation keeps, so one table never mixes presets unlabelled.

#include <QString>

#include "core/verify/reward.h"

namespace crucible::ui {

/// `stored` under `preset`: scored again from its inputs when the presets differ, else as
/// stored (an evaluation without kept inputs, or an unknown preset name, keeps its own preset,
/// which its `preset` field names).
Reward rewardUnder(const Reward& stored, const QString& preset);

/// A table cell: "1.2", or "1.2 (kevin)" when the reward could not be put under `preset`.
QString rewardCellText(const Reward& shown, const QString& preset);

/// What a part of a hierarchical reward credits, for a legend: "code tokens", "plan tokens",
/// "whole response" for the part-less.
QString rewardPartLabel(const std::string& part);

}  // namespace crucible::ui
