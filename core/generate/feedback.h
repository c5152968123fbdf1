#pragma once
// What a refinement round tells the model about the best previous candidate: the verifier's
// findings (verdict, error text, mismatch statistics, flags, timing) as plain text for a prompt.

#include <string>

#include "core/verify/evaluation.h"

namespace crucible::generate {

/// A few lines, most important first; long error text is shortened.
std::string describeFindings(const Evaluation& evaluation);

}  // namespace crucible::generate
