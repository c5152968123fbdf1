#pragma once
// The result of verifying one candidate: what `crucible verify --json` prints, what the store
// keeps and what the GUI shows. One value type, one JSON form.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/verify/flag.h"
#include "core/verify/reward.h"
#include "core/verify/speedup_spread.h"
#include "core/verify/verdict.h"

namespace crucible {

struct Timing {
  std::optional<double> referenceMs = std::nullopt;
  std::optional<double> candidateMs = std::nullopt;
  std::optional<double> compileReferenceMs = std::nullopt;  // torch.compile, where it works
  // PyTorch's (and PoCL's) CPU threads in both stages, when set.
  std::optional<int> threads = std::nullopt;
  int rounds = 0;            // the candidate's timed rounds
  bool interleaved = false;  // every round timed in turns with the reference's
  bool operator==(const Timing&) const = default;
};

/// Wall-clock seconds one part of the verification took, as the parent saw it: a whole stage
/// ("static", "reference", "candidate", "compare") or one phase the worker announced inside it
/// ("candidate/candidate-timing"). For finding where a slow verification spends its time.
struct StageTime {
  std::string stage;
  double seconds = 0;
  bool operator==(const StageTime&) const = default;
};

/// Why an evaluation could not finish. `blame` says whose fault: "candidate" (it crashed, hung,
/// ran out of memory, raised) or "infrastructure" (never mixed into the candidate's reward).
struct EvalError {
  std::string stage;  // usage, reference, static, load, run, timeout, memory, crash, infrastructure
  std::string message;
  std::string blame = "candidate";
  std::optional<int> line = std::nullopt;
  bool operator==(const EvalError&) const = default;
};

struct Evaluation {
  Verdict verdict = Verdict::Error;
  bool correct = false;
  std::optional<double> speedup;  // reference_ms / candidate_ms when correct and timed
  // The range the samples allow; none where the outside check's time replaced the candidate's.
  std::optional<SpeedupSpread> speedupSpread;
  std::optional<SpeedupSpread> compileSpeedupSpread;  // against torch.compile, where measured
  Timing timing;
  std::vector<Flag> flags;
  Reward reward;
  std::string backend;  // interpret | cuda | opencl
  std::string device;   // human-readable device name
  std::optional<EvalError> error;
  bool sandboxed = false;
  std::string sandboxNote;                                // what held, or why nothing did
  nlohmann::json correctness = nlohmann::json::object();  // per-trial mismatch statistics
  nlohmann::json environment = nlohmann::json::object();  // versions of python, torch, triton...
  nlohmann::json facts = nlohmann::json::object();        // the worker's raw facts, per stage
  std::string plan;  // text before the code when the candidate was a model response
  std::vector<StageTime> stageSeconds;  // in the order they ran

  bool hasCheatFlag() const;
  bool operator==(const Evaluation&) const = default;
};

void to_json(nlohmann::json& j, const Timing& timing);
void from_json(const nlohmann::json& j, Timing& timing);
void to_json(nlohmann::json& j, const StageTime& time);
void from_json(const nlohmann::json& j, StageTime& time);
void to_json(nlohmann::json& j, const EvalError& error);
void from_json(const nlohmann::json& j, EvalError& error);
void to_json(nlohmann::json& j, const Evaluation& evaluation);
void from_json(const nlohmann::json& j, Evaluation& evaluation);

}  // namespace crucible
