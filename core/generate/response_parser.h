#pragma once
// A language model's answer made into a candidate: the code of its last fenced block that
// defines ModelNew, and the plan (text or <think> block) kept apart (core/task/extract).

#include <string>

#include "core/generate/generator.h"

namespace crucible::generate {

/// Fills `candidate`'s plan, code and error from its rawResponse. `finishReason` "length" (the
/// answer was cut off) is mentioned in the error when no code could be taken.
void parseResponse(GeneratedCandidate& candidate, const std::string& finishReason = "");

}  // namespace crucible::generate
