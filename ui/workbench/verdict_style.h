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
/// An evaluation's speedup as far as its samples support it: with its range
/// ("1.82x (1.61-2.05x)"), or in a table cell only the median unless the range is too wide to
/// tell ("noisy 0.7-3.1x"). A cheating candidate's is "not credited" (with the measurement
/// beside it when `withRange`).
QString speedupText(const Evaluation& evaluation, bool withRange);
QString millisecondsText(const std::optional<double>& ms);

}  // namespace crucible::ui
