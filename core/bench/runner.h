#pragma once
// Running a benchmark: every task through core/generate's pipeline (runGeneration: the model's
// candidates verified and stored as they arrive, the fastest verified kept), J tasks at a time,
// each finished task reported at once so a caller can save it and resume after an interruption.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/bench/task_result.h"
#include "core/bench/task_set.h"
#include "core/generate/generator.h"
#include "core/generate/pipeline.h"

namespace crucible::bench {

struct BenchOptions {
  // Sampling, verification and storage for every task: `generate` and `verify` as for
  // `crucible generate` (their paths are set per task), n = samples per task, databasePath.
  generate::GenerationRequest request;
  int jobs = 1;                  // tasks run at the same time
  std::optional<double> shrink;  // scale size constants (shrink.h); nullopt: the tasks as written
  std::string shrunkDir;         // where shrunk copies are written (required with shrink)
};

struct BenchEvent {
  enum class Kind {
    Skipped,   // already finished in an earlier run (resumed): `result` is the earlier row
    Started,   // the task starts
    Finished,  // the task finished: `result` is its row (save it)
  };
  Kind kind = Kind::Started;
  const BenchTask* task = nullptr;
  const TaskResult* result = nullptr;
  int done = 0;  // tasks finished or skipped so far, this one included
  int total = 0;
  double elapsed = 0;                // seconds since the run started
  std::optional<double> etaSeconds;  // from the tasks run so far (not the skipped ones)
};

/// Makes one generator per worker thread (generators are not shared between threads).
using GeneratorFactory = std::function<std::unique_ptr<generate::Generator>()>;

struct BenchRun {
  std::vector<TaskResult> tasks;  // finished (or resumed) tasks, in the task set's order
  int skipped = 0;                // resumed from `finished`
  bool interrupted = false;       // a stop request ended the run; unfinished tasks are absent
};

/// Runs `tasks`. A task whose id is in `finished`, resumable (TaskResult::resumable) and with the
/// same source SHA-256 (after shrinking) is not run again. `onEvent` is called from the worker
/// threads, one call at a time. A task whose reference is refused or whose generator fails is a row
/// with `error` set (it counts as a failed task); a stop request ends the run after killing what
/// runs, and leaves cut-short tasks out.
BenchRun runBench(const std::vector<BenchTask>& tasks, const BenchOptions& options,
                  const GeneratorFactory& makeGenerator,
                  const std::map<std::string, TaskResult>& finished, std::stop_token stop,
                  const std::function<void(const BenchEvent&)>& onEvent = {});

}  // namespace crucible::bench
