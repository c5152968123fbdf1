#pragma once
// The run check of synthesized tasks: the worker's `synthcheck` stage runs a batch of reference
// files in one sandboxed process (core/proc) and saves every output of every trial; here the
// outputs are judged with the verifier's own rules: no NaN or Inf, and none of METR's
// degeneracy gates (assessDegeneracy) fires, output by output.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

namespace crucible::task_synth {

struct CheckOptions {
  int seed = 42;               // model and input seed (inputs of trial k use seed + 1 + k)
  int trials = 2;              // two input sets, so that an output insensitive to its inputs shows
  int threads = 1;             // torch threads in the worker
  double secondsPerTask = 20;  // the batch's wall-clock limit grows with its size
};

/// The outcome for one task: accepted, or why not ("nonfinite", "degenerate", "error").
struct CheckResult {
  bool accepted = false;
  std::string kind;    // empty when accepted
  std::string reason;  // a sentence for the user
  double ms = 0;       // eager time of one forward (trial 0)
};
void to_json(nlohmann::json& j, const CheckResult& r);

/// The worker could not run the batch at all (not the tasks' fault): the caller stops.
class CheckInfrastructureError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Checks `files` (absolute paths) in one worker process; `scratch` is a folder for the
/// outputs. One result per file, in order. Throws CheckInfrastructureError when the worker
/// cannot be found, the process fails, or `stop` is requested (the message is then
/// "cancelled").
std::vector<CheckResult> checkTasks(const std::vector<std::filesystem::path>& files,
                                    const std::filesystem::path& scratch,
                                    const CheckOptions& options, std::stop_token stop = {});

}  // namespace crucible::task_synth
