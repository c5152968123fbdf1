#include "core/verify/evaluation.h"

#include <algorithm>
#include <stdexcept>

namespace crucible {

namespace {
using nlohmann::json;

json optionalNumber(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

std::optional<double> readOptionalNumber(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}
}  // namespace

bool Evaluation::hasCheatFlag() const {
  return std::any_of(flags.begin(), flags.end(),
                     [](const Flag& f) { return f.severity == Severity::Cheat; });
}

void to_json(json& j, const Timing& timing) {
  j = json{{"reference_ms", optionalNumber(timing.referenceMs)},
           {"candidate_ms", optionalNumber(timing.candidateMs)},
           {"compile_reference_ms", optionalNumber(timing.compileReferenceMs)},
           {"threads", timing.threads ? json(*timing.threads) : json(nullptr)},
           {"rounds", timing.rounds},
           {"interleaved", timing.interleaved}};
}

void from_json(const json& j, Timing& timing) {
  timing.referenceMs = readOptionalNumber(j, "reference_ms");
  timing.candidateMs = readOptionalNumber(j, "candidate_ms");
  timing.compileReferenceMs = readOptionalNumber(j, "compile_reference_ms");
  timing.threads = j.contains("threads") && j["threads"].is_number_integer()
                       ? std::optional<int>(j["threads"].get<int>())
                       : std::nullopt;
  timing.rounds = j.value("rounds", 0);
  timing.interleaved = j.value("interleaved", false);
}

void to_json(json& j, const EvalError& error) {
  j = json{{"stage", error.stage},
           {"message", error.message},
           {"blame", error.blame},
           {"line", error.line ? json(*error.line) : json(nullptr)}};
}

void from_json(const json& j, EvalError& error) {
  error.stage = j.at("stage").get<std::string>();
  error.message = j.value("message", "");
  error.blame = j.value("blame", "candidate");
  error.line = j.contains("line") && !j["line"].is_null() ? std::optional<int>(j["line"].get<int>())
                                                          : std::nullopt;
}

void to_json(json& j, const StageTime& time) {
  j = json{{"stage", time.stage}, {"seconds", time.seconds}};
}

void from_json(const json& j, StageTime& time) {
  time.stage = j.at("stage").get<std::string>();
  time.seconds = j.value("seconds", 0.0);
}

void to_json(json& j, const Evaluation& e) {
  j = json{{"verdict", toString(e.verdict)},
           {"correct", e.correct},
           {"speedup", optionalNumber(e.speedup)},
           {"speedup_spread", e.speedupSpread ? json(*e.speedupSpread) : json(nullptr)},
           {"compile_speedup_spread",
            e.compileSpeedupSpread ? json(*e.compileSpeedupSpread) : json(nullptr)},
           {"timing", e.timing},
           {"flags", e.flags},
           {"reward", e.reward},
           {"backend", e.backend},
           {"device", e.device},
           {"error", e.error ? json(*e.error) : json(nullptr)},
           {"sandboxed", e.sandboxed},
           {"sandbox_note", e.sandboxNote},
           {"correctness", e.correctness},
           {"environment", e.environment},
           {"plan", e.plan},
           {"stage_seconds", e.stageSeconds},
           {"facts", e.facts}};
}

void from_json(const json& j, Evaluation& e) {
  auto verdict = verdictFromString(j.at("verdict").get<std::string>());
  if (!verdict) throw std::invalid_argument("bad verdict in evaluation JSON");
  e.verdict = *verdict;
  e.correct = j.value("correct", false);
  e.speedup = readOptionalNumber(j, "speedup");
  auto spread = [&j](const char* key) {
    return j.contains(key) && j[key].is_object()
               ? std::optional<SpeedupSpread>(j[key].get<SpeedupSpread>())
               : std::nullopt;
  };
  e.speedupSpread = spread("speedup_spread");
  e.compileSpeedupSpread = spread("compile_speedup_spread");
  e.timing = j.value("timing", Timing{});
  e.flags = j.value("flags", std::vector<Flag>{});
  e.reward = j.contains("reward") ? j["reward"].get<Reward>() : Reward{};
  e.backend = j.value("backend", "");
  e.device = j.value("device", "");
  e.error = j.contains("error") && !j["error"].is_null()
                ? std::optional<EvalError>(j["error"].get<EvalError>())
                : std::nullopt;
  e.sandboxed = j.value("sandboxed", false);
  e.sandboxNote = j.value("sandbox_note", "");
  e.correctness = j.value("correctness", json::object());
  e.environment = j.value("environment", json::object());
  e.plan = j.value("plan", "");
  e.stageSeconds = j.value("stage_seconds", std::vector<StageTime>{});
  e.facts = j.value("facts", json::object());
}

}  // namespace crucible
