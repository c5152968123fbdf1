#pragma once
// A benchmark run's outputs, apart from the plots: the `--json` object and the Markdown report.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/bench/metrics.h"
#include "core/bench/run_settings.h"
#include "core/bench/task_result.h"

namespace crucible::bench {

struct BenchReport {
  RunSettings settings;
  std::vector<TaskResult> tasks;  // finished (run now or resumed)
  Metrics metrics;                // over `tasks`
  int tasksPlanned = 0;           // in the task set; more than tasks.size() when interrupted
  int resumed = 0;                // rows taken from an earlier run
  bool interrupted = false;
  std::string database;  // where the sessions are, when stored
  std::string machine;   // for humans: host, CPU, GPU
  std::string date;      // ISO-8601 UTC
};

/// `crucible bench --json`: tasks (rows), the metrics' keys at the top level (correct_rate,
/// fast_p, fast_p_vs_compile, geomean_speedup, pass_at_k, ...), shrunk, shrink, settings,
/// tasks_planned, resumed, interrupted, database, machine, date.
nlohmann::json toJson(const BenchReport& report);

/// report.md. `plots` are PNG file names next to it; `plotsNote` says why there are none.
std::string markdownReport(const BenchReport& report, const std::vector<std::string>& plots,
                           const std::string& plotsNote);

}  // namespace crucible::bench
