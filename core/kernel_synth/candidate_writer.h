#pragma once
// A whole candidate file: the reference's module-level statements and Model's methods other than
// forward (so ModelNew builds the same parameters under the same seed), the kernels, and a
// forward that only allocates, takes views and launches them.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/kernel_synth/lowering.h"
#include "core/kernel_synth/op_graph.h"
#include "core/kernel_synth/partition.h"

namespace crucible::kernel_synth {

struct WrittenCandidate {
  std::string code;
  std::string plan;
};

/// Writes the candidate for one tiling per group kind; nullopt with `why` when a group cannot
/// be lowered. `source` is the trace stage's `source` facts.
std::optional<WrittenCandidate> writeCandidate(const OpGraph& graph, const Partition& partition,
                                               const nlohmann::json& source, const TileSet& tiles,
                                               const std::string& referenceName, std::string& why);

}  // namespace crucible::kernel_synth
