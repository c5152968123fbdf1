#pragma once
// Crucible's built-in synthesizer: traces a KernelBench reference in the worker, partitions the
// op graph into fusion groups and writes candidate files of readable Triton, one per tiling.

#include <functional>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <vector>

namespace crucible::kernel_synth {

struct SynthRequest {
  std::string referencePath;  // a KernelBench-format reference (Model, get_inputs, get_init_inputs)
  int maxCandidates = 4;      // tilings to propose (the search verifies them and keeps the fastest)
  std::string backend =
      "interpret";              // the backend the candidates will run on (tile choices may differ)
  int seed = 42;                // the seed the model is built and traced under
  double timeoutSeconds = 300;  // the trace stage, wall clock
};

struct SynthCandidate {
  std::string code;   // a complete candidate file defining ModelNew
  std::string plan;   // human-readable: fusion groups, how each is lowered, the tiling
  std::string label;  // short, e.g. "BLOCK=1024 warps=4"
};

struct SynthResult {
  std::vector<SynthCandidate> candidates;  // empty when something could not be lowered
  std::vector<std::string> unsupported;    // "line 12: torch.fft.rfft": ops it could not lower
  nlohmann::json graph;                    // the traced op graph
};

void to_json(nlohmann::json& j, const SynthCandidate& c);
void from_json(const nlohmann::json& j, SynthCandidate& c);
void to_json(nlohmann::json& j, const SynthResult& r);
void from_json(const nlohmann::json& j, SynthResult& r);

/// Lowers an already traced graph (the trace stage's `graph` and `source` facts): the part of
/// synthesize() that runs no process. `referenceName` only appears in comments.
SynthResult synthesizeFromTrace(const nlohmann::json& graph, const nlohmann::json& source,
                                const SynthRequest& request, const std::string& referenceName);

/// Throws crucible::BadInput (core/verify/verifier.h) for a reference that does not load or
/// trace, with file:line. Long: runs a worker process; honours stop.
SynthResult synthesize(const SynthRequest& request, std::stop_token stop = {},
                       const std::function<void(const std::string&)>& progress = {});

}  // namespace crucible::kernel_synth
