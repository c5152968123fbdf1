#pragma once
// An evaluation as text for people: the CLI's default output and the Markdown report.

#include <string>

#include "core/verify/evaluation.h"

namespace crucible {

/// A few lines: verdict, speedup and times, flags with lines, error, reward components.
std::string renderEvaluationText(const Evaluation& evaluation);

/// The speedup with the range its samples allow: "1.82x (1.61-2.05x)", "noisy: 0.7-3.1x
/// (median 1.4x)" when the range is too wide to tell, "1.82x" without samples, "n/a".
std::string speedupSummary(const Evaluation& evaluation);

/// The speedup over torch.compile (its time over the candidate's) with its own range, as
/// speedupSummary; "n/a" where torch.compile was not timed.
std::string compileSpeedupSummary(const Evaluation& evaluation);

}  // namespace crucible
