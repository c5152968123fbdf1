#include "core/verify/speedup_spread.h"

#include <algorithm>
#include <cmath>

namespace crucible {

namespace {

std::vector<double> positive(const std::vector<double>& samples) {
  std::vector<double> kept;
  std::copy_if(samples.begin(), samples.end(), std::back_inserter(kept),
               [](double x) { return std::isfinite(x) && x > 0; });
  return kept;
}

}  // namespace

double quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(samples.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const auto above = std::min(below + 1, samples.size() - 1);
  return samples[below] + (at - static_cast<double>(below)) * (samples[above] - samples[below]);
}

std::optional<SpeedupSpread> speedupSpread(const std::vector<double>& referenceSamples,
                                           const std::vector<double>& candidateSamples) {
  const auto reference = positive(referenceSamples);
  const auto candidate = positive(candidateSamples);
  if (reference.size() < 2 || candidate.size() < 2) return std::nullopt;
  SpeedupSpread s;
  s.low = quantile(reference, 0.25) / quantile(candidate, 0.75);
  s.high = quantile(reference, 0.75) / quantile(candidate, 0.25);
  s.noisy = s.high > kNoisySpreadRatio * s.low;
  return s;
}

std::optional<SpeedupSpread> spreadOverOneTime(const std::vector<double>& referenceSamples,
                                               double candidateMs) {
  const auto reference = positive(referenceSamples);
  if (reference.size() < 2 || !std::isfinite(candidateMs) || candidateMs <= 0) return std::nullopt;
  return SpeedupSpread{quantile(reference, 0.25) / candidateMs,
                       quantile(reference, 0.75) / candidateMs, true};
}

std::optional<SpeedupSpread> roundSpread(const std::vector<std::vector<double>>& referenceRounds,
                                         const std::vector<std::vector<double>>& candidateRounds) {
  std::vector<double> ratios;
  for (std::size_t k = 0; k < std::min(referenceRounds.size(), candidateRounds.size()); ++k) {
    const auto reference = positive(referenceRounds[k]);
    const auto candidate = positive(candidateRounds[k]);
    if (reference.empty() || candidate.empty()) continue;
    ratios.push_back(quantile(reference, 0.5) / quantile(candidate, 0.5));
  }
  if (ratios.size() < 2) return std::nullopt;
  SpeedupSpread s;
  s.low = quantile(ratios, 0.25);
  s.high = quantile(ratios, 0.75);
  s.noisy = s.high > kNoisySpreadRatio * s.low;
  return s;
}

std::optional<SpeedupSpread> widest(const std::optional<SpeedupSpread>& a,
                                    const std::optional<SpeedupSpread>& b) {
  if (!a || !b) return a ? a : b;
  SpeedupSpread s;
  s.low = std::min(a->low, b->low);
  s.high = std::max(a->high, b->high);
  s.noisy = s.high > kNoisySpreadRatio * s.low;
  return s;
}

double conservativeSpeedup(double speedup, const std::optional<SpeedupSpread>& spread) {
  return spread && spread->noisy ? std::min(speedup, spread->low) : speedup;
}

void to_json(nlohmann::json& j, const SpeedupSpread& spread) {
  j = nlohmann::json{{"low", spread.low}, {"high", spread.high}, {"noisy", spread.noisy}};
}

void from_json(const nlohmann::json& j, SpeedupSpread& spread) {
  spread.low = j.value("low", 0.0);
  spread.high = j.value("high", 0.0);
  spread.noisy = j.value("noisy", false);
}

}  // namespace crucible
