#include "core/bench/task_result.h"

namespace crucible::bench {

namespace {

using nlohmann::json;

json optionalJson(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

std::optional<double> optionalNumber(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

std::optional<double> ratio(const std::optional<double>& baselineMs, const SampleResult& s) {
  if (!s.correct || !baselineMs || !s.candidateMs || *baselineMs <= 0 || *s.candidateMs <= 0) {
    return std::nullopt;
  }
  return *baselineMs / *s.candidateMs;
}

/// Stages a candidate never got through when its evaluation stopped there: it did not "compile"
/// in KernelBench's sense (its module could not be built and loaded).
bool stoppedBeforeLoading(const Evaluation& e) {
  if (e.verdict == Verdict::Invalid) return true;
  if (!e.error) return false;
  const std::string& stage = e.error->stage;
  return stage == "extract" || stage == "static" || stage == "load" || stage == "usage" ||
         stage == "reference" || e.error->blame == "infrastructure";
}

}  // namespace

std::optional<double> SampleResult::speedup() const {
  return ratio(referenceMs, *this);
}

std::optional<double> SampleResult::speedupVsCompile() const {
  return ratio(compileMs, *this);
}

SampleResult sampleFrom(const Evaluation& e, std::optional<std::int64_t> candidateId) {
  SampleResult s;
  s.verdict = std::string(toString(e.verdict));
  s.correct = e.verdict == Verdict::Verified;
  s.compiled = !stoppedBeforeLoading(e);
  s.referenceMs = e.timing.referenceMs;
  s.candidateMs = e.timing.candidateMs;
  s.compileMs = e.timing.compileReferenceMs;
  s.candidateId = candidateId;
  for (const Flag& f : e.flags) s.flags.push_back(f.id);
  if (e.error) s.error = e.error->stage + ": " + e.error->message;
  s.infrastructure = e.error && e.error->blame == "infrastructure";
  for (const StageTime& t : e.stageSeconds) {
    if (t.stage.find('/') == std::string::npos) s.stageSeconds.push_back(t);
  }
  return s;
}

const SampleResult* TaskResult::kept() const {
  return chosen && *chosen < samples.size() ? &samples[*chosen] : nullptr;
}

int TaskResult::correctSamples() const {
  int n = 0;
  for (const auto& s : samples) n += s.correct ? 1 : 0;
  return n;
}

bool TaskResult::resumable() const {
  if (samples.empty()) return false;
  for (const auto& s : samples) {
    if (s.infrastructure) return false;
  }
  return true;
}

std::optional<std::size_t> keptSample(const std::vector<SampleResult>& samples) {
  if (samples.empty()) return std::nullopt;
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].correct) continue;
    if (!best) {
      best = i;
      continue;
    }
    const auto mine = samples[i].speedup(), theirs = samples[*best].speedup();
    if (mine && (!theirs || *mine > *theirs)) best = i;
  }
  return best ? best : std::optional<std::size_t>(0);
}

void to_json(json& j, const SampleResult& s) {
  j = json{{"verdict", s.verdict},
           {"correct", s.correct},
           {"compiled", s.compiled},
           {"reference_ms", optionalJson(s.referenceMs)},
           {"candidate_ms", optionalJson(s.candidateMs)},
           {"compile_ms", optionalJson(s.compileMs)},
           {"speedup", optionalJson(s.speedup())},
           {"candidate", s.candidateId ? json(*s.candidateId) : json(nullptr)},
           {"flags", s.flags},
           {"error", s.error.empty() ? json(nullptr) : json(s.error)},
           {"infrastructure", s.infrastructure},
           {"stage_seconds", s.stageSeconds}};
}

void from_json(const json& j, SampleResult& s) {
  s = SampleResult{};
  s.verdict = j.at("verdict").get<std::string>();
  s.correct = j.at("correct").get<bool>();
  s.compiled = j.value("compiled", false);
  s.referenceMs = optionalNumber(j, "reference_ms");
  s.candidateMs = optionalNumber(j, "candidate_ms");
  s.compileMs = optionalNumber(j, "compile_ms");
  if (j.contains("candidate") && !j.at("candidate").is_null()) {
    s.candidateId = j.at("candidate").get<std::int64_t>();
  }
  s.flags = j.value("flags", std::vector<std::string>{});
  if (j.contains("error") && j.at("error").is_string()) s.error = j.at("error").get<std::string>();
  s.infrastructure = j.value("infrastructure", false);
  s.stageSeconds = j.value("stage_seconds", std::vector<StageTime>{});
}

// The row repeats the kept sample's numbers at the top level (what a table or a plot wants);
// reading it back rebuilds everything from `samples` and `chosen`.
void to_json(json& j, const TaskResult& t) {
  const SampleResult* k = t.kept();
  j = json{{"id", t.id},
           {"file", t.file},
           {"name", t.name},
           {"level", t.level},
           {"problem_id", t.problemId},
           {"source_sha256", t.sourceSha256},
           {"verdict", k ? json(k->verdict) : json(nullptr)},
           {"correct", t.correct()},
           {"speedup", k ? optionalJson(k->speedup()) : json(nullptr)},
           {"speedup_vs_compile", k ? optionalJson(k->speedupVsCompile()) : json(nullptr)},
           {"reference_ms", k ? optionalJson(k->referenceMs) : json(nullptr)},
           {"candidate_ms", k ? optionalJson(k->candidateMs) : json(nullptr)},
           {"compile_ms", k ? optionalJson(k->compileMs) : json(nullptr)},
           {"candidate", k && k->candidateId ? json(*k->candidateId) : json(nullptr)},
           {"samples_run", t.samples.size()},
           {"correct_samples", t.correctSamples()},
           {"chosen", t.chosen ? json(*t.chosen) : json(nullptr)},
           {"samples", t.samples},
           {"session", t.sessionId ? json(*t.sessionId) : json(nullptr)},
           {"error", t.error.empty() ? json(nullptr) : json(t.error)},
           {"device", t.device},
           {"seconds", t.seconds}};
}

void from_json(const json& j, TaskResult& t) {
  t = TaskResult{};
  t.id = j.at("id").get<std::string>();
  t.file = j.value("file", std::string());
  t.name = j.value("name", std::string());
  t.level = j.value("level", std::string());
  t.problemId = j.value("problem_id", 0);
  t.sourceSha256 = j.value("source_sha256", std::string());
  t.samples = j.value("samples", std::vector<SampleResult>{});
  if (j.contains("chosen") && !j.at("chosen").is_null())
    t.chosen = j.at("chosen").get<std::size_t>();
  if (j.contains("session") && !j.at("session").is_null()) {
    t.sessionId = j.at("session").get<std::int64_t>();
  }
  if (j.contains("error") && j.at("error").is_string()) t.error = j.at("error").get<std::string>();
  t.device = j.value("device", std::string());
  t.seconds = j.value("seconds", 0.0);
}

}  // namespace crucible::bench
