#pragma once
// How far a speedup can be trusted. A median over a busy machine's samples can be far from the
// truth, so every speedup carries the range its samples allow and says when that range is too
// wide to tell.

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace crucible {

/// The speedup over the middle half of both sides' samples: from the reference's fast quarter
/// over the candidate's slow quarter (`low`) to the reference's slow quarter over the
/// candidate's fast quarter (`high`). `noisy` when `high` exceeds `low` by more than
/// kNoisySpreadRatio: the measurement cannot tell the speedup apart from the load.
struct SpeedupSpread {
  double low = 0;
  double high = 0;
  bool noisy = false;
  bool operator==(const SpeedupSpread&) const = default;
};

inline constexpr double kNoisySpreadRatio = 2.0;

/// The share of the timed rounds' time during which some task waited for a CPU above which a
/// CPU device's times are taken as contended. A quiet machine verifying alone stays well below
/// it (its own bookkeeping between turns); other processes busy on every core go far above it.
inline constexpr double kContendedCpuShare = 0.25;

/// The q-quantile (0..1) of `samples`, interpolated linearly between order statistics.
double quantile(std::vector<double> samples, double q);

/// The spread of referenceSamples / candidateSamples (milliseconds per call); nullopt when
/// either side has fewer than two positive samples.
std::optional<SpeedupSpread> speedupSpread(const std::vector<double>& referenceSamples,
                                           const std::vector<double>& candidateSamples);

/// The spread of referenceSamples over one candidate time that has no samples of its own (the
/// outside check's): the reference's middle half over it, always noisy, because the candidate's
/// side of the range is unknown. nullopt with fewer than two reference samples or no time.
std::optional<SpeedupSpread> spreadOverOneTime(const std::vector<double>& referenceSamples,
                                               double candidateMs);

/// The middle half of the rounds' speedups (the reference's round median over the candidate's
/// round median, round by round): load that changes between rounds shows here even where each
/// round's samples agree, while one disturbed round among several does not decide the range.
/// nullopt with fewer than two comparable rounds.
std::optional<SpeedupSpread> roundSpread(const std::vector<std::vector<double>>& referenceRounds,
                                         const std::vector<std::vector<double>>& candidateRounds);

/// Both ranges at once: the lower of the lows, the higher of the highs; either may be missing.
std::optional<SpeedupSpread> widest(const std::optional<SpeedupSpread>& a,
                                    const std::optional<SpeedupSpread>& b);

/// The speed a reward may count: the low end when the spread is noisy, else the speedup.
double conservativeSpeedup(double speedup, const std::optional<SpeedupSpread>& spread);

void to_json(nlohmann::json& j, const SpeedupSpread& spread);
void from_json(const nlohmann::json& j, SpeedupSpread& spread);

}  // namespace crucible
