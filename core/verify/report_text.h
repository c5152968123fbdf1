#pragma once
// An evaluation as text for people: the CLI's default output and the Markdown report.

#include <string>

#include "core/verify/evaluation.h"

namespace crucible {

/// A few lines: verdict, speedup and times, flags with lines, error, reward components.
std::string renderEvaluationText(const Evaluation& evaluation);

}  // namespace crucible
