#include "core/generate/selection.h"

#include "core/verify/speedup_spread.h"

namespace crucible::generate {

namespace {

bool verified(const CandidateResult& c) {
  return c.evaluation && c.evaluation->verdict == Verdict::Verified;
}

/// Lower is nearer to right; nullopt: not worth refining.
std::optional<int> closeness(const CandidateResult& c) {
  if (!c.evaluation) return std::nullopt;
  const Evaluation& e = *c.evaluation;
  if (e.error && e.error->blame == "infrastructure") return std::nullopt;
  switch (e.verdict) {
    case Verdict::Verified:
      return 0;
    case Verdict::Incorrect:
      return 1;
    case Verdict::Cheating:
      return 2;
    case Verdict::Invalid:
      return 3;
    case Verdict::Error:
      return 4;  // a timeout or crash the candidate caused
  }
  return std::nullopt;
}

std::optional<double> creditedSpeedup(const Evaluation& e) {
  if (!e.speedup) return std::nullopt;
  return conservativeSpeedup(*e.speedup, e.speedupSpread);
}

}  // namespace

std::optional<std::size_t> fastestVerified(const std::vector<CandidateResult>& candidates) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!verified(candidates[i])) continue;
    if (!best) {
      best = i;
      continue;
    }
    // A noisy measurement counts for the speed its slow end supports, as in the reward.
    const auto mine = creditedSpeedup(*candidates[i].evaluation);
    const auto theirs = creditedSpeedup(*candidates[*best].evaluation);
    if (mine && (!theirs || *mine > *theirs)) best = i;
  }
  return best;
}

std::optional<std::size_t> candidateToRefine(const std::vector<CandidateResult>& candidates) {
  if (auto best = fastestVerified(candidates)) return best;
  std::optional<std::size_t> chosen;
  int chosenCloseness = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto c = closeness(candidates[i]);
    if (c && (!chosen || *c <= chosenCloseness)) {
      chosen = i;
      chosenCloseness = *c;
    }
  }
  return chosen;
}

}  // namespace crucible::generate
