// The degeneracy gates of compare.h: how much of the reference's output sits near zero, near its
// own mean, or unchanged from the previous trial. Two passes over each output (the second needs
// the mean), each in fixed-size chunks on several threads whose counts and sums merge in chunk
// order, so every machine gets the same fractions.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/util/parallel_chunks.h"
#include "core/verify/compare.h"
#include "core/verify/tensor_compare.h"

namespace crucible {

namespace {
constexpr std::size_t kBlock = 2048;  // elements converted to double at a time

struct FirstPass {
  double sum = 0;
  std::uint64_t nearZero = 0;
  std::uint64_t nearPrevious = 0;  // within atol of the previous trial's element
};

/// Calls visit(first, count) for the blocks of chunk i of a tensor of `numel` elements.
template <typename Visit>
void forBlocksOfChunk(std::size_t i, std::size_t numel, Visit visit) {
  const std::size_t begin = i * kCompareChunk;
  const std::size_t end = std::min(begin + kCompareChunk, numel);
  for (std::size_t b = begin; b < end; b += kBlock) visit(b, std::min(kBlock, end - b));
}

/// The sum (for the mean), the elements near zero and those near `previous`'s (when given).
FirstPass firstPass(const TensorData& t, const TensorData* previous, double atol) {
  std::vector<FirstPass> parts(compareChunks(t.numel()));
  forEachChunk(parts.size(), [&](std::size_t i) {
    FirstPass& p = parts[i];
    std::array<double, kBlock> x{}, prev{};
    std::array<double, 4> sums{};  // element j in lane j % 4: four short chains of additions
    forBlocksOfChunk(i, t.numel(), [&](std::size_t first, std::size_t n) {
      t.toDoubles(first, n, x.data());
      for (std::size_t j = 0; j < n; ++j) {
        sums[j % 4] += x[j];
        p.nearZero += std::abs(x[j]) <= atol;
      }
      if (!previous) return;
      previous->toDoubles(first, n, prev.data());
      for (std::size_t j = 0; j < n; ++j) p.nearPrevious += std::abs(x[j] - prev[j]) <= atol;
    });
    p.sum = sums[0] + sums[1] + sums[2] + sums[3];
  });
  FirstPass total;
  for (const auto& p : parts) {  // in chunk order: the same sum on every machine
    total.sum += p.sum;
    total.nearZero += p.nearZero;
    total.nearPrevious += p.nearPrevious;
  }
  return total;
}

std::uint64_t countNear(const TensorData& t, double centre, double atol) {
  std::vector<std::uint64_t> parts(compareChunks(t.numel()));
  forEachChunk(parts.size(), [&](std::size_t i) {
    std::array<double, kBlock> x{};
    forBlocksOfChunk(i, t.numel(), [&](std::size_t first, std::size_t n) {
      t.toDoubles(first, n, x.data());
      for (std::size_t j = 0; j < n; ++j) parts[i] += std::abs(x[j] - centre) <= atol;
    });
  });
  std::uint64_t total = 0;
  for (auto n : parts) total += n;
  return total;
}
}  // namespace

nlohmann::json Degeneracy::toJson() const {
  return {{"degenerate", degenerate},
          {"near_zero_fraction", nearZeroFraction},
          {"near_mean_fraction", nearMeanFraction},
          {"across_trials_fraction", acrossTrialsFraction},
          {"reason", reason}};
}

Degeneracy assessDegeneracy(const std::vector<const ValuePack*>& trials,
                            const ToleranceTable& tolerances) {
  // METR's gates: more than 70% of values within atol of zero, more than 70% within atol of
  // the mean, or more than 95% within atol of another seed's output.
  Degeneracy d;
  std::uint64_t total = 0, nearZero = 0, nearMean = 0, acrossTotal = 0, acrossSame = 0;
  for (std::size_t k = 0; k < trials.size(); ++k) {
    const auto& tensors = trials[k]->tensors();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const auto& t = tensors[i];
      if (!isFloating(t.dtype()) || t.numel() == 0) continue;
      const double atol = tolerances.forDType(t.dtype()).atol;
      const TensorData* previous = nullptr;
      if (k > 0 && i < trials[k - 1]->tensors().size() &&
          trials[k - 1]->tensors()[i].numel() == t.numel()) {
        previous = &trials[k - 1]->tensors()[i];
      }
      const FirstPass p = firstPass(t, previous, atol);
      nearZero += p.nearZero;
      nearMean += countNear(t, p.sum / static_cast<double>(t.numel()), atol);
      total += t.numel();
      if (previous) {
        acrossSame += p.nearPrevious;
        acrossTotal += t.numel();
      }
    }
  }
  if (total == 0) return d;
  d.nearZeroFraction = static_cast<double>(nearZero) / static_cast<double>(total);
  d.nearMeanFraction = static_cast<double>(nearMean) / static_cast<double>(total);
  d.acrossTrialsFraction =
      acrossTotal ? static_cast<double>(acrossSame) / static_cast<double>(acrossTotal) : 0;
  auto percent = [](double f) { return std::to_string(static_cast<int>(std::round(f * 100))); };
  if (d.nearZeroFraction > 0.7) {
    d.reason = percent(d.nearZeroFraction) +
               "% of the reference's outputs are within the "
               "absolute tolerance of zero";
  } else if (d.nearMeanFraction > 0.7) {
    d.reason = percent(d.nearMeanFraction) +
               "% of the reference's outputs are within the "
               "absolute tolerance of their mean (near-constant)";
  } else if (acrossTotal && d.acrossTrialsFraction > 0.95) {
    d.reason = percent(d.acrossTrialsFraction) +
               "% of the reference's outputs do not change "
               "between inputs (insensitive to the inputs)";
  }
  d.degenerate = !d.reason.empty();
  return d;
}

}  // namespace crucible
