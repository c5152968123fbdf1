// Next-token choice from one row of logits: temperature (0 = greedy), top-k (0 = off), top-p
// (1 = off), drawn with a seeded mt19937_64 that belongs to one candidate, so that candidate i of
// an n-way request (seed + i) draws exactly what a single run with that seed draws.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <random>
#include <span>

namespace crucible::llm {

struct SamplingParams {
  double temperature = 0.0;
  int topK = 0;
  double topP = 1.0;
  std::uint64_t seed = 0;
};
void to_json(nlohmann::json& j, const SamplingParams& p);
void from_json(const nlohmann::json& j, SamplingParams& p);

class Sampler {
 public:
  Sampler(const SamplingParams& params, std::uint64_t seed) : params_(params), rng_(seed) {}
  int sample(std::span<const float> logits);

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

}  // namespace crucible::llm
