#pragma once
// KernelBench's eval_results.json, written and read so Crucible's runs and published runs can be
// compared with the same metrics.
//
// The layout (KernelBench scripts/eval_from_generations.py, add_to_eval_results_file): one file
// per level, an object keyed by the problem id as a string, each value a list of samples
//   {"sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats"}
// with runtimes in ms and -1 when not measured. Newer KernelBench versions add "ref_runtime",
// "ref_runtime_stats" and "speedup" per sample; Crucible writes those too, plus
// "ref_runtime_compiled" (torch.compile), and keeps its own facts under "metadata" (task file,
// verdict, flags, error, shrunk). Older files hold one object per problem instead of a list;
// both are read. Without "ref_runtime", the reference time comes from a KernelBench baseline
// timing file (results/timing/<hardware>/<baseline>.json: {"level1": {"<problem file>":
// {"mean": ms, ...}}}), matched by the "<id>_" prefix of the problem file name.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/bench/task_result.h"

namespace crucible::bench {

/// A file that is not in the layout; what() names the key and what is wrong.
class EvalResultsError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The problem id of each task in eval_results.json: its problemId, or its 1-based position
/// when a task has none or two tasks share one.
std::vector<int> problemIdsFor(const std::vector<TaskResult>& tasks);

/// eval_results.json for `tasks` (one level's worth: problem ids must not repeat).
nlohmann::json toEvalResults(const std::vector<TaskResult>& tasks, bool shrunk);

/// The tasks of `tasks` grouped by level ("" for none), in order of first appearance.
std::vector<std::pair<std::string, std::vector<TaskResult>>> byLevel(
    const std::vector<TaskResult>& tasks);

/// Reads a published eval_results.json. `baseline` is a KernelBench baseline timing file (or
/// null) and `level` its level key ("1" reads "level1"). Every sample of a problem is kept; the
/// task's kept sample is chosen as for a Crucible run (keptSample). Throws EvalResultsError.
std::vector<TaskResult> fromEvalResults(const nlohmann::json& evalResults,
                                        const nlohmann::json& baseline = nullptr,
                                        const std::string& level = "");

}  // namespace crucible::bench
