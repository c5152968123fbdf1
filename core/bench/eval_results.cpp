#include "core/bench/eval_results.h"

#include <algorithm>
#include <set>

namespace crucible::bench {

namespace {

using nlohmann::json;

double orMinusOne(const std::optional<double>& v) {
  return v ? *v : -1.0;
}

json statsOf(const std::optional<double>& ms) {
  return ms ? json{{"mean", *ms}, {"num_trials", nullptr}} : json::object();
}

std::optional<double> positive(const json& entry, const char* key) {
  if (!entry.contains(key) || !entry.at(key).is_number()) return std::nullopt;
  const double v = entry.at(key).get<double>();
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

/// The baseline's mean time for problem `id` of `level`: the entry whose file name starts with
/// "<id>_".
std::optional<double> baselineMs(const json& baseline, const std::string& level, int id) {
  if (!baseline.is_object()) return std::nullopt;
  const auto levelIt = baseline.find("level" + level);
  if (levelIt == baseline.end() || !levelIt->is_object()) return std::nullopt;
  const std::string prefix = std::to_string(id) + "_";
  for (const auto& [file, stats] : levelIt->items()) {
    if (file.rfind(prefix, 0) == 0 && stats.is_object()) return positive(stats, "mean");
  }
  return std::nullopt;
}

SampleResult sampleFromEntry(const json& entry, const std::string& where,
                             std::optional<double> fallbackReferenceMs) {
  if (!entry.is_object() || !entry.contains("correctness") ||
      !entry.at("correctness").is_boolean()) {
    throw EvalResultsError(where + ": a sample needs a boolean \"correctness\"");
  }
  SampleResult s;
  const json metadata = entry.value("metadata", json::object());
  s.correct = entry.at("correctness").get<bool>() && entry.value("compiled", true);
  s.compiled = entry.value("compiled", s.correct);
  s.verdict =
      metadata.is_object() && metadata.contains("verdict") && metadata["verdict"].is_string()
          ? metadata["verdict"].get<std::string>()
          : (s.correct ? "correct" : (s.compiled ? "incorrect" : "not compiled"));
  s.candidateMs = positive(entry, "runtime");
  s.referenceMs = positive(entry, "ref_runtime");
  if (!s.referenceMs) s.referenceMs = fallbackReferenceMs;
  s.compileMs = positive(entry, "ref_runtime_compiled");
  if (metadata.is_object()) {
    if (metadata.contains("flags") && metadata["flags"].is_array()) {
      for (const auto& f : metadata["flags"]) {
        if (f.is_string()) s.flags.push_back(f.get<std::string>());
      }
    }
    if (metadata.contains("error") && metadata["error"].is_string()) {
      s.error = metadata["error"].get<std::string>();
    }
    if (metadata.contains("candidate") && metadata["candidate"].is_number_integer()) {
      s.candidateId = metadata["candidate"].get<std::int64_t>();
    }
  }
  return s;
}

}  // namespace

std::vector<int> problemIdsFor(const std::vector<TaskResult>& tasks) {
  std::set<int> seen;
  bool unique = true;
  for (const auto& t : tasks) unique = unique && t.problemId > 0 && seen.insert(t.problemId).second;
  std::vector<int> ids;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    ids.push_back(unique ? tasks[i].problemId : static_cast<int>(i) + 1);
  }
  return ids;
}

json toEvalResults(const std::vector<TaskResult>& tasks, bool shrunk) {
  const std::vector<int> ids = problemIdsFor(tasks);
  json out = json::object();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const TaskResult& t = tasks[i];
    json samples = json::array();
    for (std::size_t s = 0; s < t.samples.size(); ++s) {
      const SampleResult& r = t.samples[s];
      json metadata = {{"crucible_task", t.file},
                       {"verdict", r.verdict},
                       {"flags", r.flags},
                       {"shrunk", shrunk},
                       {"kept", t.chosen && *t.chosen == s}};
      if (!r.error.empty()) metadata["error"] = r.error;
      if (r.candidateId) metadata["candidate"] = *r.candidateId;
      samples.push_back({{"sample_id", s},
                         {"compiled", r.compiled},
                         {"correctness", r.correct},
                         {"metadata", metadata},
                         {"runtime", orMinusOne(r.candidateMs)},
                         {"runtime_stats", statsOf(r.candidateMs)},
                         {"ref_runtime", orMinusOne(r.referenceMs)},
                         {"ref_runtime_stats", statsOf(r.referenceMs)},
                         {"ref_runtime_compiled", orMinusOne(r.compileMs)},
                         {"speedup", orMinusOne(r.speedup())}});
    }
    out[std::to_string(ids[i])] = samples;
  }
  return out;
}

std::vector<std::pair<std::string, std::vector<TaskResult>>> byLevel(
    const std::vector<TaskResult>& tasks) {
  std::vector<std::pair<std::string, std::vector<TaskResult>>> groups;
  for (const auto& t : tasks) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == t.level; });
    if (it == groups.end()) {
      groups.emplace_back(t.level, std::vector<TaskResult>{});
      it = groups.end() - 1;
    }
    it->second.push_back(t);
  }
  return groups;
}

std::vector<TaskResult> fromEvalResults(const json& evalResults, const json& baseline,
                                        const std::string& level) {
  if (!evalResults.is_object()) {
    throw EvalResultsError("eval_results.json must be an object keyed by problem id");
  }
  std::vector<std::pair<int, TaskResult>> tasks;
  for (const auto& [key, value] : evalResults.items()) {
    int id = 0;
    try {
      std::size_t used = 0;
      id = std::stoi(key, &used);
      if (used != key.size()) throw std::invalid_argument(key);
    } catch (const std::exception&) {
      throw EvalResultsError("key \"" + key + "\" is not a problem id");
    }
    TaskResult t;
    t.problemId = id;
    t.id = level.empty() ? key : "level" + level + "/" + key;
    t.level = level;
    const auto reference = baselineMs(baseline, level, id);
    const json entries = value.is_array() ? value : json::array({value});
    // KernelBench appends samples as they finish; order them by sample_id.
    std::vector<std::pair<int, SampleResult>> samples;
    for (const auto& entry : entries) {
      SampleResult s = sampleFromEntry(entry, "problem " + key, reference);
      if (t.file.empty() && entry.contains("metadata") && entry["metadata"].is_object() &&
          entry["metadata"].contains("crucible_task") &&
          entry["metadata"]["crucible_task"].is_string()) {
        t.file = entry["metadata"]["crucible_task"].get<std::string>();
      }
      samples.emplace_back(entry.value("sample_id", static_cast<int>(samples.size())),
                           std::move(s));
    }
    std::stable_sort(samples.begin(), samples.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [_, s] : samples) t.samples.push_back(std::move(s));
    t.chosen = keptSample(t.samples);
    tasks.emplace_back(id, std::move(t));
  }
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TaskResult> out;
  for (auto& [_, t] : tasks) out.push_back(std::move(t));
  return out;
}

}  // namespace crucible::bench
