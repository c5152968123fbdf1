#pragma once
// What `crucible bench` keeps about one task: each sample (candidate) the model wrote for it, as
// verified, and the task's row (the sample the search kept). Value types with JSON round-trips;
// the metrics (metrics.h) and KernelBench's eval_results.json (eval_results.h) are computed from
// them and nothing else.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/verify/evaluation.h"

namespace crucible::bench {

/// One candidate of a task, reduced to what the benchmark needs.
struct SampleResult {
  std::string verdict;    // verified | incorrect | cheating | invalid | error
  bool correct = false;   // verdict == verified: correct and not caught cheating
  bool compiled = false;  // it got past the static and load stages (KernelBench's "compiled")
  std::optional<double> referenceMs;  // eager PyTorch on the same inputs
  std::optional<double> candidateMs;
  std::optional<double> compileMs;  // torch.compile(reference), where it ran
  std::optional<std::int64_t> candidateId;
  std::vector<std::string> flags;       // flag ids
  std::string error;                    // "stage: message" when the evaluation could not finish
  bool infrastructure = false;          // the error was the machine's, not the candidate's
  std::vector<StageTime> stageSeconds;  // the verification's whole stages (not their phases)
  bool operator==(const SampleResult&) const = default;

  /// reference / candidate time when correct and both were timed; nullopt otherwise.
  std::optional<double> speedup() const;
  /// torch.compile time / candidate time when correct and both were timed.
  std::optional<double> speedupVsCompile() const;
};

/// The sample of an evaluation.
SampleResult sampleFrom(const Evaluation& evaluation, std::optional<std::int64_t> candidateId);

/// One task of a benchmark run.
struct TaskResult {
  std::string id;     // the task file's path in the task folder without ".py": "level1/12_ReLU"
  std::string file;   // that path with ".py"
  std::string name;   // "ReLU"
  std::string level;  // "1", "2", "3", "synth", or "" when the folder does not say
  int problemId = 0;  // the number the file name starts with (KernelBench's problem id); 0: none
  std::string sourceSha256;               // of the reference as run (shrunk when shrunk)
  std::vector<SampleResult> samples;      // in the order they arrived
  std::optional<std::size_t> chosen;      // the sample the search kept (fastest verified)
  std::optional<std::int64_t> sessionId;  // in the database, when stored
  std::string error;                      // why the task has no samples (generator, reference)
  std::string device;                     // what the kernels ran on (the first evaluation's)
  double seconds = 0;                     // wall time of the task
  bool operator==(const TaskResult&) const = default;

  /// The kept sample, or nullptr when there is none.
  const SampleResult* kept() const;
  bool correct() const { return kept() && kept()->correct; }
  int correctSamples() const;
  /// Whether a rerun may reuse this row: the model wrote at least one sample and no sample's
  /// evaluation failed for the machine's sake. A task without a kernel (a generator that failed,
  /// perhaps for a moment; a refused reference) runs again.
  bool resumable() const;
};

void to_json(nlohmann::json& j, const SampleResult& sample);
void from_json(const nlohmann::json& j, SampleResult& sample);
void to_json(nlohmann::json& j, const TaskResult& task);
void from_json(const nlohmann::json& j, TaskResult& task);

/// The index of the sample a best-of-n search keeps: the fastest correct one (highest speedup,
/// then the earliest), else the first correct one, else the first one; nullopt when empty.
std::optional<std::size_t> keptSample(const std::vector<SampleResult>& samples);

}  // namespace crucible::bench
