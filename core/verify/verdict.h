#pragma once

#include <optional>
#include <string_view>

namespace crucible {

/// The outcome of verifying one candidate (DESIGN.md, "Verification pipeline").
enum class Verdict { Verified, Incorrect, Cheating, Invalid, Error };

std::string_view toString(Verdict verdict);
std::optional<Verdict> verdictFromString(std::string_view text);

/// The CLI's exit code for a verdict: 0 verified; 1 incorrect, cheating, invalid; 3 error.
int exitCodeFor(Verdict verdict);

}  // namespace crucible
