#pragma once
// The synthesizer's random numbers: SplitMix64, written out so that one seed gives the same
// programs with every compiler and standard library (std::uniform_int_distribution does not).

#include <cstdint>

namespace crucible::task_synth {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, n) for n > 0 (the modulo bias is below 2^-40 for the small n used here).
  std::uint64_t below(std::uint64_t n) { return next() % n; }

  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

/// The seed of one stream derived from a run's seed and a stream number (candidate, solver).
inline std::uint64_t deriveSeed(std::uint64_t seed, std::uint64_t stream) {
  SplitMix64 mix(seed ^ (stream * 0xd1b54a32d192ed03ULL));
  mix.next();
  return mix.next();
}

}  // namespace crucible::task_synth
