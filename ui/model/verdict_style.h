#pragma once
// How verdicts look everywhere in the UI: one colour and one icon each.

#include <QColor>
#include <QIcon>
#include <optional>

#include "core/verify/evaluation.h"

namespace crucible::ui {

QColor verdictColor(const std::optional<Evaluation>& evaluation);
QIcon verdictIcon(const std::optional<Evaluation>& evaluation);
/// "1.84x" or "n/a"; "12.3 ms" or "n/a".
QString speedupText(const std::optional<double>& speedup);
QString millisecondsText(const std::optional<double>& ms);

}  // namespace crucible::ui
