#pragma once
// One candidate of a generation run, as the search sees it: what the generator wrote, where it
// sits in the lineage, and its evaluation.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/generate/generator.h"
#include "core/verify/evaluation.h"

namespace crucible::generate {

struct CandidateResult {
  std::int64_t id = 0;  // the store's candidate id; 1, 2, 3... when nothing is stored
  int round = 1;
  std::optional<std::int64_t> parentId;  // the candidate this one refines
  GeneratedCandidate candidate;
  std::optional<Evaluation> evaluation;  // nullopt when the run stopped before it was verified
};

/// The candidate in `crucible generate --json`: id, origin, model, verdict, correct, speedup,
/// reward (the preset's total), flags (ids), and round, parent, label and error.
nlohmann::json summaryJson(const CandidateResult& result);

}  // namespace crucible::generate
