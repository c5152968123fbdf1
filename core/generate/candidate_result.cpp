#include "core/generate/candidate_result.h"

namespace crucible::generate {

nlohmann::json summaryJson(const CandidateResult& r) {
  using nlohmann::json;
  json flags = json::array();
  json j = {{"id", r.id},
            {"origin", r.candidate.origin},
            {"model", r.candidate.model},
            {"round", r.round},
            {"parent", r.parentId ? json(*r.parentId) : json(nullptr)},
            {"label", r.candidate.label},
            {"verdict", nullptr},
            {"correct", false},
            {"speedup", nullptr},
            {"reward", nullptr},
            {"flags", flags},
            {"error", r.candidate.error.empty() ? json(nullptr) : json(r.candidate.error)}};
  if (!r.evaluation) return j;
  const Evaluation& e = *r.evaluation;
  for (const Flag& f : e.flags) flags.push_back(f.id);
  j["verdict"] = toString(e.verdict);
  j["correct"] = e.correct;
  j["speedup"] = e.speedup ? json(*e.speedup) : json(nullptr);
  j["reward"] = e.reward.total ? json(*e.reward.total) : json(nullptr);
  j["flags"] = flags;
  if (e.error && r.candidate.error.empty()) j["error"] = e.error->stage + ": " + e.error->message;
  return j;
}

}  // namespace crucible::generate
