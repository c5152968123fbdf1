#pragma once
// The judge: one place holds the policy that turns the worker's facts and the comparisons made
// outside the candidate's process into flags, a verdict and a reward. Pure: no processes, no
// files, so every rule is testable without Python.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/verify/compare.h"
#include "core/verify/evaluation.h"

namespace crucible {

/// How the candidate's worker process ended, seen from outside.
struct ProcessOutcome {
  bool ran = false;
  bool timedOut = false;
  bool memoryExceeded = false;
  bool cancelled = false;
  int termSignal = 0;
  int exitCode = 0;
  bool reportedFacts = false;
  double timeoutSeconds = 0;
  std::string stderrTail;  // the end of what it printed, for the error message
};

/// Everything the judge looks at.
struct Observations {
  nlohmann::json staticFacts = nlohmann::json::object();  // the static stage's "candidate"
  // The reference stage's facts; their "timing" is the baseline stage's.
  nlohmann::json referenceFacts = nlohmann::json::object();
  nlohmann::json candidateFacts;  // null when none arrived
  nlohmann::json baselineFacts;   // the reference's timer's facts; null when none arrived
  nlohmann::json turns;           // the timing turns as granted (TurnReferee::log)
  ProcessOutcome candidateProcess;

  std::vector<std::optional<PackComparison>> trials;  // expected_K vs actual_K; nullopt: none
  std::optional<PackComparison> alt;                  // expected_alt vs actual_alt
  std::optional<PackComparison> repeat;               // actual_0 vs actual_repeat
  std::optional<PackComparison> noop;                 // actual_0 vs actual_noop
  std::vector<std::optional<PackComparison>> timed;   // expected_K vs timed_K
  std::optional<bool> inputsMutated;                  // inputs_0 vs inputs_after_0, bitwise
  bool candidateOutputsConstant = false;              // every trial's output equal to trial 0's
  bool referenceOutputsVary = false;             // the reference's outputs differ between trials
  std::vector<std::pair<int, int>> staleTrials;  // (k, j): actual_k == actual_j, expected differ
  Degeneracy degeneracy;
  // Timing cross-check: `checkReps` back-to-back calls took `outsideCheckMs` as the parent
  // measured them between two channel messages.
  std::optional<double> outsideCheckMs;
  int checkReps = 0;
  int forgedChannelLines = 0;              // result-channel lines without the worker's signature
  std::vector<std::string> replacedFiles;  // result files changed after the worker wrote them
};

struct JudgeOptions {
  std::string rewardPreset = "tritonrl";
  double speedupCeiling = 10.0;  // implausible_speedup above this (KernelBench's 10x)
};

/// The verdict, flags, timing, speedup and reward. Leaves backend, device, environment, facts
/// and plan for the caller.
Evaluation judge(const Observations& observations, const JudgeOptions& options);

}  // namespace crucible
