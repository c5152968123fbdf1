#include "core/llm/sampler.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <vector>

namespace crucible::llm {

void to_json(nlohmann::json& j, const SamplingParams& p) {
  j = {{"temperature", p.temperature}, {"top_k", p.topK}, {"top_p", p.topP}, {"seed", p.seed}};
}

void from_json(const nlohmann::json& j, SamplingParams& p) {
  p.temperature = j.value("temperature", 0.0);
  p.topK = j.value("top_k", 0);
  p.topP = j.value("top_p", 1.0);
  p.seed = j.value("seed", std::uint64_t{0});
}

int Sampler::sample(std::span<const float> logits) {
  if (logits.empty()) return -1;
  if (params_.temperature <= 0.0)
    return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  // Candidates by descending logit (ties by id), cut by top-k. Only as much of the order is sorted
  // as the cut and top-p need: a full sort of a 49k-150k vocabulary costs milliseconds, per token
  // and candidate, about as much as the model's step.
  std::vector<int> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t keep =
      params_.topK > 0 ? std::min<std::size_t>(params_.topK, order.size()) : order.size();
  const auto byLogit = [&](int a, int b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::size_t sorted = 0;  // order[0, sorted) is final
  const auto sortTo = [&](std::size_t count) {
    if (count <= sorted) return;
    std::partial_sort(order.begin() + static_cast<std::ptrdiff_t>(sorted),
                      order.begin() + static_cast<std::ptrdiff_t>(count), order.end(), byLogit);
    sorted = count;
  };
  // Softmax at the temperature, in double so the cut and the draw do not depend on summation order.
  const double top = *std::max_element(logits.begin(), logits.end());
  const auto weight = [&](int id) { return std::exp((logits[id] - top) / params_.temperature); };
  double total = 0;
  if (keep < order.size()) {
    sortTo(keep);
    for (std::size_t i = 0; i < keep; ++i) total += weight(order[i]);
  } else {
    for (std::size_t id = 0; id < order.size(); ++id) total += weight(static_cast<int>(id));
  }
  // Top-p: the smallest prefix whose mass reaches p (always at least one token).
  std::size_t n = keep;
  if (params_.topP < 1.0) {
    double mass = 0;
    for (std::size_t i = 0; i < keep; ++i) {
      if (i == sorted) sortTo(std::min(keep, std::max<std::size_t>(64, 4 * sorted)));
      mass += weight(order[i]) / total;
      if (mass >= params_.topP) {
        n = i + 1;
        break;
      }
    }
  }
  sortTo(n);
  std::vector<double> probs(n);
  for (std::size_t i = 0; i < n; ++i) probs[i] = weight(order[i]);
  const double kept = std::accumulate(probs.begin(), probs.end(), 0.0);
  double r = std::uniform_real_distribution<double>(0.0, kept)(rng_);
  for (std::size_t i = 0; i < n; ++i) {
    r -= probs[i];
    if (r < 0) return order[i];
  }
  return order[n - 1];
}

}  // namespace crucible::llm
