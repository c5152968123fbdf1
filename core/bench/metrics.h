#pragma once
// The numbers a benchmark run reports, computed from its task rows and nothing else (pure, so
// each definition is pinned by a unit test with hand-computed values).
//
// fast_p follows KernelBench (Ouyang et al. 2025, "KernelBench: Can LLMs Write Efficient GPU
// Kernels?", arXiv:2502.10517, and its src/score.py `fastp`): the fraction of ALL tasks whose
// kernel is correct AND has speedup > p, speedup being the baseline's time over the kernel's.
// The denominator is every task, including those that failed, were never generated or were
// interrupted; the comparison is strict, so fast_1 counts kernels strictly faster than eager
// PyTorch and fast_0 is the correct rate among timed kernels. "Correct" here is Crucible's
// verdict `verified` (correct and no cheat flag), which is stricter than KernelBench's.
//
// pass@k is the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained
// on Code", arXiv:2107.03374): with n samples of which c are correct,
// pass@k = 1 - C(n-c, k) / C(n, k), computed as a product to stay finite; averaged over tasks.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/bench/task_result.h"

namespace crucible::bench {

/// KernelBench's thresholds, and their keys in the JSON ("0", "0.5", "1", "1.5", "2").
inline const std::vector<double> kFastPThresholds = {0, 0.5, 1, 1.5, 2};
std::string thresholdKey(double p);

/// Which time a kernel is compared against.
enum class Baseline { Eager, Compile };

/// fast_p over all `tasks` (0 when there are none).
double fastP(const std::vector<TaskResult>& tasks, double p, Baseline baseline = Baseline::Eager);

/// Chen et al.'s unbiased pass@k for one task with n samples, c correct. When fewer than k
/// samples exist (a generator that wrote fewer than asked, an interrupted task), k is lowered to
/// n, as KernelBench's calculate_pass_at_k does; n = 0 gives 0.
double passAtK(int n, int c, int k);

/// The k values reported for `samples` samples per task: 1, 2, 5, 10, 20, 50, 100 up to samples,
/// and samples itself.
std::vector<int> passAtKValues(int samples);

struct Metrics {
  int tasks = 0;
  int correct = 0;   // tasks whose kept sample is verified
  int compiled = 0;  // tasks whose kept sample got past loading
  double correctRate = 0;
  std::map<std::string, double> fastP;  // keyed by thresholdKey
  // Against torch.compile: nullopt when no task has a torch.compile time. Otherwise over all
  // tasks, like fastP; a correct task without a torch.compile time is not counted as fast.
  std::optional<std::map<std::string, double>> fastPVsCompile;
  int compileTimed = 0;  // tasks whose kept sample has a torch.compile time
  // Geometric mean of the speedup over the correct tasks that were timed; nullopt when none.
  std::optional<double> geomeanSpeedup;
  std::optional<double> geomeanSpeedupVsCompile;
  int samples = 1;                        // samples asked per task
  std::map<std::string, double> passAtK;  // "1", "2", ...: the mean over tasks
  bool operator==(const Metrics&) const = default;
};

Metrics computeMetrics(const std::vector<TaskResult>& tasks, int samplesPerTask);

/// correct_rate, compiled, fast_p, fast_p_vs_compile (null when not measured), compile_timed,
/// geomean_speedup, geomean_speedup_vs_compile, samples, pass_at_k, tasks_total, tasks_correct.
void to_json(nlohmann::json& j, const Metrics& metrics);
void from_json(const nlohmann::json& j, Metrics& metrics);

/// The speedups of the correct, timed tasks (for plots and tables).
std::vector<double> correctSpeedups(const std::vector<TaskResult>& tasks,
                                    Baseline baseline = Baseline::Eager);

}  // namespace crucible::bench

namespace crucible::bench {

/// fast_p at `points` evenly spaced thresholds from 0 to maxP, for the fast_p curve.
std::vector<std::pair<double, double>> fastPCurve(const std::vector<TaskResult>& tasks,
                                                  Baseline baseline, double maxP, int points);

/// One bar of the speedup distribution.
struct HistogramBin {
  double low = 0, high = 0;  // speedup range [low, high); the end bins take everything beyond
  int count = 0;
  bool operator==(const HistogramBin&) const = default;
};

/// The speedups in bins evenly spaced on a log2 scale: `perOctave` bins per doubling from
/// 2^-octaves to 2^octaves.
std::vector<HistogramBin> speedupHistogram(const std::vector<double>& speedups, int octaves = 4,
                                           int perOctave = 2);

}  // namespace crucible::bench
