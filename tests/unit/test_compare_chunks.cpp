// The chunked, multi-threaded comparison against a straightforward element-by-element one: the
// same counts, first mismatch, histogram, map and errors on tensors that span several chunks,
// whatever the number of threads.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/util/parallel_chunks.h"
#include "core/verify/compare.h"
#include "core/verify/tensor_compare.h"
#include "pack_writer.h"

namespace crucible {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kPoison64 = std::bit_cast<double>(std::uint64_t{0x7FF8DEADDEADDEADULL});

/// Restores the process's thread count when a test ends.
class Threads {
 public:
  explicit Threads(unsigned n) { setMaxParallelThreads(n); }
  ~Threads() { setMaxParallelThreads(0); }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;
};

ValuePack packOf(const std::vector<double>& values, std::vector<std::int64_t> shape) {
  return ValuePack::parse(test::packBytes({test::tensorOf("float64", values, shape)}), "mem");
}

/// The comparison as the header documents it, one element at a time, nothing clever.
struct Reference {
  std::uint64_t mismatches = 0, poisoned = 0, nonFinite = 0;
  std::optional<std::uint64_t> firstMismatch;
  double maxAbs = 0, maxRel = 0, meanAbs = 0, relNorm = 0;
  std::vector<std::uint64_t> histogram = std::vector<std::uint64_t>(12, 0);
  std::vector<double> map;
};

Reference reference(const std::vector<double>& e, const std::vector<double>& a, std::uint64_t rows,
                    std::uint64_t cols, Tolerance tol) {
  const std::array<double, 11> edges = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
                                        1e-2, 1e-1, 1e0,  1e1,  1e2};
  Reference r;
  // The absolute tolerance at the expected output's scale (its finite elements' RMS).
  long double squares = 0;
  std::size_t finite = 0;
  for (double x : e) {
    if (!std::isfinite(x)) continue;
    squares += static_cast<long double>(x) * x;
    ++finite;
  }
  if (finite) {
    const double rms = static_cast<double>(std::sqrt(squares / finite));
    tol.atol = std::max(tol.atol, tol.rtol * rms);
  }
  const std::uint64_t mapRows = std::min<std::uint64_t>(rows, 32);
  const std::uint64_t mapCols = std::min<std::uint64_t>(cols, 32);
  std::vector<double> bad(mapRows * mapCols, 0), size(mapRows * mapCols, 0);
  double sumAbs = 0, diffNorm2 = 0, refNorm2 = 0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    const double x = e[i], y = a[i];
    const bool poison = std::bit_cast<std::uint64_t>(y) == 0x7FF8DEADDEADDEADULL;
    r.poisoned += poison;
    r.nonFinite += !std::isfinite(y);
    bool match;
    if (std::isnan(x) || std::isnan(y)) {
      match = std::isnan(x) && std::isnan(y) && !poison;
    } else if (std::isinf(x) || std::isinf(y)) {
      match = x == y;
    } else {
      match = std::abs(y - x) <= tol.atol + tol.rtol * std::abs(x);
    }
    const double diff = std::isfinite(x) && std::isfinite(y) ? std::abs(y - x) : match ? 0 : kInf;
    if (!match) {
      ++r.mismatches;
      if (!r.firstMismatch) r.firstMismatch = i;
    }
    int bucket = 0;
    for (double edge : edges) bucket += diff >= edge;
    ++r.histogram[bucket];
    const std::size_t cell = (i / cols * mapRows / rows) * mapCols + (i % cols) * mapCols / cols;
    size[cell] += 1;
    bad[cell] += !match;
    r.maxAbs = std::max(r.maxAbs, diff);
    if (std::isfinite(x) && x != 0) r.maxRel = std::max(r.maxRel, diff / std::abs(x));
    sumAbs += std::isfinite(diff) ? diff : 0;
    diffNorm2 += std::isfinite(diff) ? diff * diff : kInf;
    refNorm2 += std::isfinite(x) ? x * x : 0;
  }
  for (std::size_t k = 0; k < bad.size(); ++k) r.map.push_back(bad[k] / size[k]);
  r.meanAbs = sumAbs / static_cast<double>(e.size());
  r.relNorm = std::sqrt(diffNorm2 / refNorm2);
  return r;
}

void expectSame(const TensorComparison& c, const Reference& r) {
  EXPECT_EQ(c.mismatches, r.mismatches);
  EXPECT_EQ(c.firstMismatch, r.firstMismatch);
  EXPECT_EQ(c.poisoned, r.poisoned);
  EXPECT_EQ(c.nonFiniteActual, r.nonFinite);
  EXPECT_EQ(c.errorHistogram, r.histogram);
  EXPECT_EQ(c.mismatchMap, r.map);
  EXPECT_EQ(c.maxAbsError, r.maxAbs);
  EXPECT_EQ(c.maxRelError, r.maxRel);
  // Sums are added chunk by chunk (and lane by lane): equal up to rounding (a million terms).
  EXPECT_NEAR(c.meanAbsError, r.meanAbs, 1e-10 * r.meanAbs);
  if (std::isinf(r.relNorm)) {
    EXPECT_EQ(c.relativeNormError, r.relNorm);
  } else {
    EXPECT_NEAR(c.relativeNormError, r.relNorm, 1e-10 * r.relNorm);
  }
}

// 1000 x 1003 = 1,003,000 elements: three whole chunks and most of a fourth.
constexpr std::int64_t kRows = 1000, kCols = 1003;

/// Mostly close values with errors across every decade, and every special case somewhere.
void mixedOutputs(std::vector<double>& e, std::vector<double>& a) {
  const std::size_t n = kRows * kCols;
  e.resize(n);
  a.resize(n);
  std::uint64_t state = 42;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    e[i] = static_cast<double>(state >> 11) / 9007199254740992.0 * 6 - 3;
    // Errors from 1e-11 to 1e3 relative: most close, some not (about one in five).
    const int decade = static_cast<int>((state >> 7) % 15) - 11;
    a[i] = e[i] + std::pow(10.0, decade) * (i % 2 ? 1 : -1) * 0.7;
    if (decade > -5) a[i] = e[i] + std::pow(10.0, decade - 6);  // keep most of them close
  }
  for (std::size_t i = 0; i < n; i += 97) e[i] = 0;  // relative error skipped where e is 0
  // Errors exactly on the histogram's edges, against a zero reference.
  const std::array<double, 11> edges = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
                                        1e-2, 1e-1, 1e0,  1e1,  1e2};
  for (std::size_t k = 0; k < edges.size(); ++k) {
    e[300000 + k] = 0;
    a[300000 + k] = edges[k];
    e[300020 + k] = 0;
    a[300020 + k] = std::nextafter(edges[k], 0.0);
  }
  // Special values, in different chunks.
  e[5] = kNaN, a[5] = kNaN;                 // NaN where the reference has NaN: a match
  e[270000] = kNaN, a[270000] = kPoison64;  // poison is never a match
  e[600000] = 1, a[600000] = kPoison64;     // poison against a number
  e[600001] = kInf, a[600001] = kInf;       // equal infinities match
  e[800000] = kInf, a[800000] = -kInf;      // opposite ones do not
  e[800001] = 2, a[800001] = kInf;          // a number against infinity
  e[1000000] = 2, a[1000000] = kNaN;        // NaN against a number
  e[1000001] = kNaN, a[1000001] = 2;        // a number against NaN
}

TEST(CompareChunks, SeveralChunksGiveTheStraightforwardResult) {
  std::vector<double> e, a;
  mixedOutputs(e, a);
  const Tolerance tol{1e-4, 1e-4};
  const Reference r = reference(e, a, kRows, kCols, tol);
  ASSERT_GT(r.mismatches, 1000u);  // the case is not trivial
  ASSERT_GT(r.histogram[0], 0u);
  ASSERT_GT(r.histogram[11], 0u);
  ASSERT_EQ(r.poisoned, 2u);
  const auto pe = packOf(e, {kRows, kCols});
  const auto pa = packOf(a, {kRows, kCols});
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE(threads);
    const Threads use(threads);
    const auto c = comparePacks(pe, pa, ToleranceTable{});
    ASSERT_EQ(c.tensors.size(), 1u);
    expectSame(c.tensors[0], r);
    EXPECT_FALSE(c.ok());
  }
}

TEST(CompareChunks, TheSameBitsWhateverTheThreadCount) {
  std::vector<double> e, a;
  mixedOutputs(e, a);
  const auto pe = packOf(e, {kRows, kCols});
  const auto pa = packOf(a, {kRows, kCols});
  std::string first;
  for (unsigned threads : {1u, 2u, 5u}) {
    const Threads use(threads);
    const std::string dump =
        comparePacks(pe, pa, ToleranceTable{}, MatchRule::RelativeNorm).toJson().dump();
    if (first.empty()) first = dump;
    EXPECT_EQ(dump, first) << threads << " threads";
  }
}

TEST(CompareChunks, FloatTensorsMatchTheReferenceToo) {
  std::vector<double> e64, a64;
  mixedOutputs(e64, a64);
  std::vector<float> e(e64.begin(), e64.end()), a(a64.begin(), a64.end());
  a[600000] = std::bit_cast<float>(0x7FC0DEADu);  // float32's poison
  const auto pe = ValuePack::parse(test::packBytes({test::floats(e, {kRows, kCols})}), "e");
  const auto pa = ValuePack::parse(test::packBytes({test::floats(a, {kRows, kCols})}), "a");
  std::vector<double> ed(e.begin(), e.end()), ad(a.begin(), a.end());
  // The reference sees float32's poison as a NaN that is not poison: count it by hand.
  Reference r = reference(ed, ad, kRows, kCols, {1e-4, 1e-4});
  const Threads use(3);
  const auto c = comparePacks(pe, pa, ToleranceTable{}).tensors[0];
  EXPECT_EQ(c.poisoned, 1u);
  r.poisoned = 1;
  expectSame(c, r);
}

TEST(CompareChunks, TheEarliestMismatchWinsAcrossChunks) {
  const std::size_t n = 4 * kCompareChunk + 100;
  std::vector<double> e(n, 1.0), a(n, 1.0);
  const std::size_t late = 3 * kCompareChunk + 5, early = kCompareChunk + 7;
  a[late] = 2;
  const Threads use(4);
  auto c = comparePacks(packOf(e, {}), packOf(a, {}), ToleranceTable{}).tensors[0];
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_EQ(c.firstMismatch, late);
  a[early] = 3;
  c = comparePacks(packOf(e, {}), packOf(a, {}), ToleranceTable{}).tensors[0];
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.firstMismatch, early);
  EXPECT_EQ(c.maxAbsError, 2);
  // A one-dimensional tensor is a single row: every cell of it is a band of columns.
  EXPECT_EQ(c.mapRows, 1u);
  EXPECT_EQ(c.mapCols, 32u);
  const std::size_t cell = early * 32 / n;
  const auto start = [&](std::size_t k) { return (k * n + 31) / 32; };
  EXPECT_EQ(c.mismatchMap[cell], 1.0 / static_cast<double>(start(cell + 1) - start(cell)));
}

TEST(CompareChunks, ADifferenceThatOverflowsIsAMismatch) {
  const auto c = comparePacks(packOf({1.7e308, 1}, {}), packOf({-1.7e308, 1}, {}), ToleranceTable{})
                     .tensors[0];
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_EQ(c.firstMismatch, 0u);
  EXPECT_EQ(c.nonFiniteActual, 0u);
  EXPECT_EQ(c.maxAbsError, kInf);
  EXPECT_EQ(c.errorHistogram[11], 1u);
}

TEST(CompareChunks, YesOrNoAnswersAgreeWithTheFullComparison) {
  const std::size_t n = 3 * kCompareChunk + 11;
  std::vector<double> e(n), a(n);
  for (std::size_t i = 0; i < n; ++i) e[i] = a[i] = std::sin(static_cast<double>(i));
  const Threads use(3);
  const ToleranceTable tol;
  auto agree = [&](const std::vector<double>& x, const std::vector<double>& y, MatchRule rule) {
    const auto px = packOf(x, {}), py = packOf(y, {});
    const bool full = comparePacks(px, py, tol, rule).ok();
    EXPECT_EQ(packsMatch(px, py, tol, rule), full);
    return full;
  };
  EXPECT_TRUE(agree(e, a, MatchRule::AllClose));
  a[n - 1] += 1;  // the very last element, in the last chunk
  EXPECT_FALSE(agree(e, a, MatchRule::AllClose));
  a[n - 1] = e[n - 1];
  e[kCompareChunk] = a[kCompareChunk] = kNaN;  // NaN against NaN matches
  EXPECT_TRUE(agree(e, a, MatchRule::AllClose));
  a[kCompareChunk] = kPoison64;  // poison does not
  EXPECT_FALSE(agree(e, a, MatchRule::AllClose));
  a[kCompareChunk] = kNaN;
  a[2 * kCompareChunk] += 5e-4;  // one element out of tolerance: the relative rule lets it pass
  EXPECT_FALSE(agree(e, a, MatchRule::AllClose));
  EXPECT_FALSE(agree(e, a, MatchRule::RelativeNorm));  // NaN still fails the relative rule
  e[kCompareChunk] = a[kCompareChunk] = 0;
  EXPECT_TRUE(agree(e, a, MatchRule::RelativeNorm));
  // Different shapes never match.
  EXPECT_FALSE(packsMatch(packOf(e, {}), packOf(e, {static_cast<std::int64_t>(n), 1}), tol));
}

TEST(CompareChunks, BitwiseEqualityOverManyByteChunks) {
  std::vector<float> x(3'000'001);  // 12 MB: several chunks of bytes
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;
  auto y = x;
  const Threads use(3);
  auto pack = [](const std::vector<float>& v) {
    return ValuePack::parse(test::packBytes({test::floats(v)}), "mem");
  };
  EXPECT_TRUE(bitwiseEqual(pack(x), pack(y)));
  y.back() = std::bit_cast<float>(std::bit_cast<std::uint32_t>(y.back()) ^ 1u);  // one bit
  EXPECT_FALSE(bitwiseEqual(pack(x), pack(y)));
  y = x;
  y[0] = -0.0f;  // equal as numbers, not as bits
  EXPECT_FALSE(bitwiseEqual(pack(x), pack(y)));
  // The second tensor differs by one bit.
  const auto two = [&](const std::vector<float>& second) {
    return ValuePack::parse(test::packBytes({test::floats({1, 2}), test::floats(second)}), "two");
  };
  y = x;
  EXPECT_TRUE(bitwiseEqual(two(x), two(y)));
  y[1'500'000] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(y[1'500'000]) ^ 0x80u);
  EXPECT_FALSE(bitwiseEqual(two(x), two(y)));
}

TEST(CompareChunks, DegeneracyFractionsAreCountedOverEveryChunk) {
  // Three trials; counted by hand below. Values chosen away from the tolerance's edges.
  const std::size_t n = 3 * kCompareChunk + 333;
  std::vector<std::vector<double>> trials(3, std::vector<double>(n));
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t kind = (i * 7 + k) % 10;
      trials[k][i] = kind < 3 ? 0.0 : kind < 5 ? 5e-5 * static_cast<double>(k) : 1.0 + kind;
    }
  }
  const double atol = 1e-4;
  std::uint64_t nearZero = 0, nearMean = 0, nearPrevious = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    double mean = 0;
    for (double x : trials[k]) mean += x;
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) {
      nearZero += std::abs(trials[k][i]) <= atol;
      nearMean += std::abs(trials[k][i] - mean) <= atol;
      if (k > 0) nearPrevious += std::abs(trials[k][i] - trials[k - 1][i]) <= atol;
    }
  }
  std::vector<ValuePack> packs;
  for (const auto& t : trials) packs.push_back(packOf(t, {}));
  const Threads use(3);
  const auto d = assessDegeneracy({&packs[0], &packs[1], &packs[2]}, ToleranceTable{});
  EXPECT_EQ(d.nearZeroFraction, static_cast<double>(nearZero) / static_cast<double>(3 * n));
  EXPECT_EQ(d.nearMeanFraction, static_cast<double>(nearMean) / static_cast<double>(3 * n));
  EXPECT_EQ(d.acrossTrialsFraction, static_cast<double>(nearPrevious) / static_cast<double>(2 * n));
  EXPECT_GT(d.nearZeroFraction, 0.3);
  EXPECT_LT(d.acrossTrialsFraction, 0.95);
  EXPECT_FALSE(d.degenerate);
}

}  // namespace
}  // namespace crucible
