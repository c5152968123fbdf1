#pragma once
// Which candidate wins, and which one a refinement round builds on.

#include <cstddef>
#include <optional>
#include <vector>

#include "core/generate/candidate_result.h"

namespace crucible::generate {

/// The fastest verified candidate: the highest speedup (a verified one without a speedup ranks
/// below every timed one), the earliest on ties. nullopt when none is verified.
std::optional<std::size_t> fastestVerified(const std::vector<CandidateResult>& candidates);

/// The candidate a refinement round improves: the fastest verified; else the one nearest to
/// right (incorrect, then cheating, then invalid), the latest on ties. Failures that were not the
/// candidate's fault (infrastructure) teach nothing and are never chosen.
std::optional<std::size_t> candidateToRefine(const std::vector<CandidateResult>& candidates);

}  // namespace crucible::generate
