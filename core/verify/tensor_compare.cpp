#include "core/verify/tensor_compare.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "core/util/parallel_chunks.h"

namespace crucible {

namespace {

// Elements converted to double at a time (they stay in the L1 cache), and the unit in which a
// comparison takes its fast path or its careful one.
constexpr std::size_t kBlock = 512;
constexpr int kBuckets = TensorComparison::kHistogramBuckets;

// The histogram's lower edges: bucket k (1..10) is [1e(k-9), 1e(k-8)), the last from 1e2 on,
// so an error's bucket is the number of edges at or below it (infinity: all of them). This is
// what floor(log10(diff)) + 9 computed, without a logarithm per element and without its
// rounding next to an edge.
constexpr std::array<double, kBuckets - 1> kDecadeEdges = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
                                                           1e-2, 1e-1, 1e0,  1e1,  1e2};

// A binade [2^p, 2^(p+1)) holds at most one edge (edges are a factor 10 apart), so the bucket
// is the count of edges below the binade plus one if the error reaches the edge inside it: a
// look-up by the exponent bits and one comparison.
struct Binade {
  int edgesBelow;
  double edgeInside;  // NaN when none: no error, infinity included, reaches it
};
constexpr int kLowBinade = -28;  // 2^-27 < 1e-8: no edge below it
constexpr int kHighBinade = 7;   // 2^7 > 1e2: every edge below it

constexpr double powerOfTwo(int p) {
  return std::bit_cast<double>(static_cast<std::uint64_t>(p + 1023) << 52);
}

constexpr auto kBinades = [] {
  std::array<Binade, kHighBinade - kLowBinade + 1> table{};
  for (int p = kLowBinade; p <= kHighBinade; ++p) {
    Binade b{0, std::numeric_limits<double>::quiet_NaN()};
    for (double edge : kDecadeEdges) {
      if (edge < powerOfTwo(p)) {
        ++b.edgesBelow;
      } else if (edge < powerOfTwo(p + 1)) {
        b.edgeInside = edge;
      }
    }
    table[p - kLowBinade] = b;
  }
  return table;
}();

/// The number of edges at or below `diff`, which is >= 0 or +infinity (never NaN).
int bucketOf(double diff) {
  const int p = static_cast<int>(std::bit_cast<std::uint64_t>(diff) >> 52) - 1023;
  const Binade& b = kBinades[std::clamp(p, kLowBinade, kHighBinade) - kLowBinade];
  return b.edgesBelow + (diff >= b.edgeInside);
}

/// The AllClose test of one element when either side is not finite: infinities must be equal,
/// NaN never matches, except a NaN where the reference has NaN too (not the poison pattern).
bool nonFiniteMatches(double a, double e, const TensorData& actual, std::size_t i,
                      const std::optional<std::uint64_t>& poison) {
  if (std::isnan(a) || std::isnan(e))
    return std::isnan(a) && std::isnan(e) && actual.bitsAt(i) != poison;
  return a == e;
}

/// Where a flat index falls on the mismatch map: the tensor as [rows, cols] folded into
/// mapRows x mapCols cells.
class MapGeometry {
 public:
  explicit MapGeometry(const TensorComparison& c)
      : rows_(c.rows), cols_(c.cols), mapRows_(c.mapRows), mapCols_(c.mapCols) {
    // A column's cell from a table unless the last dimension is huge: no division per mismatch.
    if (cols_ <= kColumnTable) {
      columnCell_.resize(cols_);
      for (std::uint64_t col = 0; col < cols_; ++col) {
        columnCell_[col] = static_cast<std::uint8_t>(col * mapCols_ / cols_);
      }
    }
  }

  std::size_t cells() const { return mapRows_ * mapCols_; }
  std::uint64_t cols() const { return cols_; }
  std::uint64_t rowBase(std::uint64_t row) const { return row * mapRows_ / rows_ * mapCols_; }
  std::uint64_t columnCell(std::uint64_t col) const {
    return columnCell_.empty() ? col * mapCols_ / cols_ : columnCell_[col];
  }
  /// How many elements fold into each cell: whole bands of rows times whole bands of columns.
  std::vector<std::uint64_t> cellSizes() const {
    std::vector<std::uint64_t> sizes(cells());
    for (std::uint64_t r = 0; r < mapRows_; ++r) {
      for (std::uint64_t c = 0; c < mapCols_; ++c) {
        sizes[r * mapCols_ + c] = band(r, rows_, mapRows_) * band(c, cols_, mapCols_);
      }
    }
    return sizes;
  }

 private:
  static constexpr std::uint64_t kColumnTable = std::uint64_t{1} << 16;

  // The count of x in [0, n) with x * parts / n == part.
  static std::uint64_t band(std::uint64_t part, std::uint64_t n, std::uint64_t parts) {
    auto start = [&](std::uint64_t p) { return (p * n + parts - 1) / parts; };
    return start(part + 1) - start(part);
  }

  std::uint64_t rows_, cols_, mapRows_, mapCols_;
  std::vector<std::uint8_t> columnCell_;  // mapCols <= kMapSide fits a byte
};

/// Walks the row and column of mismatching indices forward through a chunk: a division only
/// when a row boundary is crossed, and a row's cell computed once per row.
class MapCursor {
 public:
  MapCursor(const MapGeometry& map, std::uint64_t start)
      : map_(map), index_(start), row_(start / map.cols()), col_(start % map.cols()) {}

  std::size_t cellOf(std::uint64_t i) {
    col_ += i - index_;
    index_ = i;
    if (col_ >= map_.cols()) {
      row_ += col_ / map_.cols();
      col_ %= map_.cols();
    }
    if (row_ != baseRow_) {
      baseRow_ = row_;
      base_ = map_.rowBase(row_);
    }
    return base_ + map_.columnCell(col_);
  }

 private:
  const MapGeometry& map_;
  std::uint64_t index_, row_, col_;
  std::uint64_t baseRow_ = ~std::uint64_t{0}, base_ = 0;
};

/// One chunk's share of a comparison.
struct ChunkStats {
  std::uint64_t mismatches = 0, poisoned = 0, nonFinite = 0;
  double maxAbs = 0, maxRel = 0, sumAbs = 0, diffNorm2 = 0, refNorm2 = 0;
  std::optional<std::uint64_t> firstMismatch;
  std::array<std::uint64_t, kBuckets> histogram{};
  std::vector<std::uint64_t> mapMismatches;  // per map cell; allocated at the first mismatch
};

/// The common block: every element finite on both sides and within tolerance. Element j goes to
/// lane j % 4, so each sum is four short chains of additions instead of one long one, and no
/// element takes a branch. Returns false, having added nothing, when the block holds anything
/// else; it leaves each element's error in `diffs`.
bool addCloseBlock(const double* ev, const double* av, std::size_t n, const Tolerance& tol,
                   double* diffs, ChunkStats& s) {
  constexpr std::size_t kLanes = 4;
  constexpr double kMax = std::numeric_limits<double>::max();
  if (n % kLanes) return false;
  std::array<double, kLanes> sumAbs{}, diffNorm2{}, refNorm2{}, maxAbs{}, maxRel{};
  bool close = true;
  for (std::size_t j = 0; j < n; j += kLanes) {
    for (std::size_t k = 0; k < kLanes; ++k) {
      const double x = ev[j + k], y = av[j + k];
      const double ax = std::abs(x), d = std::abs(y - x);
      close &= (ax <= kMax) & (std::abs(y) <= kMax) & (d <= tol.atol + tol.rtol * ax);
      diffs[j + k] = d;
      sumAbs[k] += d;
      diffNorm2[k] += d * d;
      refNorm2[k] += x * x;
      maxAbs[k] = std::max(maxAbs[k], d);
      maxRel[k] = std::max(maxRel[k], ax != 0 ? d / ax : 0.0);
    }
  }
  if (!close) return false;
  for (std::size_t k = 0; k < kLanes; ++k) {
    s.sumAbs += sumAbs[k];
    s.diffNorm2 += diffNorm2[k];
    s.refNorm2 += refNorm2[k];
    s.maxAbs = std::max(s.maxAbs, maxAbs[k]);
    s.maxRel = std::max(s.maxRel, maxRel[k]);
  }
  return true;
}

/// Any block, element by element: non-finite values, mismatches and where they are. Returns
/// whether the block would have passed addCloseBlock (all finite, all close).
bool addBlock(const double* ev, const double* av, std::size_t first, std::size_t n,
              const Tolerance& tol, const TensorData& a, const std::optional<std::uint64_t>& poison,
              MapCursor& cursor, const MapGeometry& map, double* diffs, ChunkStats& s) {
  const std::uint64_t before = s.mismatches + s.nonFinite;
  bool finite = true;
  for (std::size_t j = 0; j < n; ++j) {
    const double x = ev[j], y = av[j];
    double diff;
    bool match;
    if (std::isfinite(x) && std::isfinite(y)) {
      diff = std::abs(y - x);
      match = diff <= tol.atol + tol.rtol * std::abs(x);
    } else {
      finite = false;
      s.nonFinite += !std::isfinite(y);
      match = nonFiniteMatches(y, x, a, first + j, poison);
      diff = match ? 0.0 : INFINITY;
    }
    if (!match) {
      if (!s.firstMismatch) s.firstMismatch = first + j;
      ++s.mismatches;
      if (map.cells()) {
        if (s.mapMismatches.empty()) s.mapMismatches.assign(map.cells(), 0);
        ++s.mapMismatches[cursor.cellOf(first + j)];
      }
    }
    diffs[j] = diff;
    s.maxAbs = std::max(s.maxAbs, diff);
    if (std::isfinite(x) && x != 0) s.maxRel = std::max(s.maxRel, diff / std::abs(x));
    s.sumAbs += std::isfinite(diff) ? diff : 0;
    s.diffNorm2 += std::isfinite(diff) ? diff * diff : INFINITY;
    s.refNorm2 += std::isfinite(x) ? x * x : 0;
  }
  return finite && s.mismatches + s.nonFinite == before;
}

ChunkStats compareChunk(const TensorData& e, const TensorData& a, std::size_t begin,
                        std::size_t end, const Tolerance& tol,
                        const std::optional<std::uint64_t>& poison, const MapGeometry& map) {
  ChunkStats s;
  MapCursor cursor(map, begin);
  std::array<double, kBlock> ev{}, av{}, diffs{};  // filled block by block
  // Two histograms taken in turn: neighbouring errors mostly fall in one bucket, and a counter
  // incremented element after element waits on its own previous store.
  std::array<std::array<std::uint64_t, kBuckets>, 2> histogram{};
  // After a block that failed the fast path the next one goes straight to the careful path
  // (wrong outputs are wrong in runs), and back once a block is clean again. The choice
  // depends on the data alone, so it is the same on every machine.
  bool tryFast = true;
  for (std::size_t b = begin; b < end; b += kBlock) {
    const std::size_t n = std::min(kBlock, end - b);
    e.toDoubles(b, n, ev.data());
    a.toDoubles(b, n, av.data());
    if (poison) s.poisoned += a.countBits(b, n, *poison);
    if (!tryFast || !addCloseBlock(ev.data(), av.data(), n, tol, diffs.data(), s)) {
      tryFast = addBlock(ev.data(), av.data(), b, n, tol, a, poison, cursor, map, diffs.data(), s);
    }
    for (std::size_t j = 0; j < n; ++j) ++histogram[j & 1][bucketOf(diffs[j])];
  }
  for (int k = 0; k < kBuckets; ++k) s.histogram[k] = histogram[0][k] + histogram[1][k];
  return s;
}

void setUpPicture(TensorComparison& c, const std::vector<std::int64_t>& shape) {
  c.cols = shape.empty() ? 1 : static_cast<std::uint64_t>(std::max<std::int64_t>(shape.back(), 1));
  c.rows = c.elements / c.cols;
  c.mapRows = std::min(c.rows, TensorComparison::kMapSide);
  c.mapCols = std::min(c.cols, TensorComparison::kMapSide);
  c.errorHistogram.assign(kBuckets, 0);
  c.mismatchMap.assign(c.mapRows * c.mapCols, 0);
}

}  // namespace

std::uint64_t countPoisoned(const TensorData& t) {
  const auto poison = poisonBits(t.dtype());
  if (!poison) return 0;
  std::vector<std::uint64_t> counts(compareChunks(t.numel()));
  forEachChunk(counts.size(), [&](std::size_t i) {
    const std::size_t begin = i * kCompareChunk;
    counts[i] = t.countBits(begin, std::min(kCompareChunk, t.numel() - begin), *poison);
  });
  std::uint64_t total = 0;
  for (auto n : counts) total += n;
  return total;
}

double rootMeanSquare(const TensorData& t) {
  // Each chunk's sum of squares as scale^2 * ssq: the plain sum where it stays finite (the
  // usual case, one multiply-add per element), else rescaled as it goes, so that values near
  // the largest double neither overflow to an infinite tolerance nor lose the others.
  struct Sum {
    double scale = 1, ssq = 0;
    std::uint64_t count = 0;
  };
  std::vector<Sum> sums(compareChunks(t.numel()));
  forEachChunk(sums.size(), [&](std::size_t i) {
    const std::size_t begin = i * kCompareChunk;
    const std::size_t end = std::min(begin + kCompareChunk, t.numel());
    std::array<double, kBlock> values{};
    Sum plain;
    for (std::size_t b = begin; b < end; b += kBlock) {
      const std::size_t n = std::min(kBlock, end - b);
      t.toDoubles(b, n, values.data());
      for (std::size_t j = 0; j < n; ++j) {
        if (!std::isfinite(values[j])) continue;
        plain.ssq += values[j] * values[j];
        ++plain.count;
      }
    }
    if (std::isfinite(plain.ssq)) {
      sums[i] = plain;
      return;
    }
    Sum scaled{0, 0, 0};
    for (std::size_t b = begin; b < end; b += kBlock) {
      const std::size_t n = std::min(kBlock, end - b);
      t.toDoubles(b, n, values.data());
      for (std::size_t j = 0; j < n; ++j) {
        const double x = std::abs(values[j]);
        if (!std::isfinite(x)) continue;
        ++scaled.count;
        if (x == 0) continue;
        if (x > scaled.scale) {
          scaled.ssq = 1 + scaled.ssq * (scaled.scale / x) * (scaled.scale / x);
          scaled.scale = x;
        } else {
          scaled.ssq += (x / scaled.scale) * (x / scaled.scale);
        }
      }
    }
    sums[i] = scaled;
  });
  Sum total{0, 0, 0};
  for (const Sum& s : sums) {  // in chunk order: the same on every machine
    total.count += s.count;
    if (s.ssq == 0) continue;
    if (s.scale > total.scale) {
      total.ssq = s.ssq + total.ssq * (total.scale / s.scale) * (total.scale / s.scale);
      total.scale = s.scale;
    } else {
      total.ssq += s.ssq * (s.scale / total.scale) * (s.scale / total.scale);
    }
  }
  if (total.count == 0) return 0.0;
  return total.scale * std::sqrt(total.ssq / static_cast<double>(total.count));
}

Tolerance scaledTolerance(Tolerance tol, const TensorData& expected) {
  // An element's rounding error in a sum is relative to the terms summed, not to the result: an
  // output near zero amid outputs of size 180 (a long dot product cancelling) carries errors of
  // the others' size. The absolute tolerance grows with the output's scale to match.
  tol.atol = std::max(tol.atol, tol.rtol * rootMeanSquare(expected));
  return tol;
}

TensorComparison compareTensors(std::size_t index, const TensorData& e, const TensorData& a,
                                const ToleranceTable& tolerances, MatchRule rule) {
  TensorComparison c;
  c.index = index;
  c.expected = std::string(toString(e.dtype())) + " " + e.shapeText();
  c.actual = std::string(toString(a.dtype())) + " " + a.shapeText();
  c.shapeMatch = e.shape() == a.shape();
  c.dtypeMatch = e.dtype() == a.dtype();
  c.elements = e.numel();
  if (!c.shapeMatch || !c.dtypeMatch) {
    // Poison is counted on whatever the candidate returned, even when the shape is wrong.
    c.poisoned = countPoisoned(a);
    return c;
  }

  const Tolerance tol = scaledTolerance(tolerances.forDType(e.dtype()), e);
  c.atol = tol.atol;
  const auto poison = poisonBits(a.dtype());
  setUpPicture(c, e.shape());
  const MapGeometry map(c);
  std::vector<ChunkStats> chunks(compareChunks(e.numel()));
  forEachChunk(chunks.size(), [&](std::size_t i) {
    const std::size_t begin = i * kCompareChunk;
    chunks[i] =
        compareChunk(e, a, begin, std::min(begin + kCompareChunk, e.numel()), tol, poison, map);
  });

  double sumAbs = 0, diffNorm2 = 0, refNorm2 = 0;
  std::vector<std::uint64_t> mapMismatches(map.cells(), 0);
  for (const auto& s : chunks) {  // in chunk order: the same sums on every machine
    c.mismatches += s.mismatches;
    c.poisoned += s.poisoned;
    c.nonFiniteActual += s.nonFinite;
    if (!c.firstMismatch) c.firstMismatch = s.firstMismatch;
    c.maxAbsError = std::max(c.maxAbsError, s.maxAbs);
    c.maxRelError = std::max(c.maxRelError, s.maxRel);
    sumAbs += s.sumAbs;
    diffNorm2 += s.diffNorm2;
    refNorm2 += s.refNorm2;
    for (int k = 0; k < kBuckets; ++k) c.errorHistogram[k] += s.histogram[k];
    for (std::size_t k = 0; k < s.mapMismatches.size(); ++k) mapMismatches[k] += s.mapMismatches[k];
  }
  const auto sizes = map.cellSizes();
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k]) {
      c.mismatchMap[k] = static_cast<double>(mapMismatches[k]) / static_cast<double>(sizes[k]);
    }
  }
  c.meanAbsError = c.elements ? sumAbs / static_cast<double>(c.elements) : 0;
  c.relativeNormError = refNorm2 > 0 ? std::sqrt(diffNorm2 / refNorm2) : std::sqrt(diffNorm2);
  if (rule == MatchRule::AllClose) {
    c.ok = c.mismatches == 0;
  } else {
    // Degenerate references: judge by the error relative to the output's own size. Poison and
    // NaN still fail.
    c.ok = c.poisoned == 0 && c.nonFiniteActual == 0 && c.relativeNormError <= tol.rtol * 10;
  }
  return c;
}

bool allClose(const TensorData& e, const TensorData& a, const Tolerance& given) {
  const Tolerance tol = scaledTolerance(given, e);
  const auto poison = poisonBits(a.dtype());
  std::atomic<bool> mismatch{false};
  forEachChunk(compareChunks(e.numel()), [&](std::size_t i) {
    const std::size_t begin = i * kCompareChunk;
    const std::size_t end = std::min(begin + kCompareChunk, e.numel());
    std::array<double, kBlock> ev{}, av{};
    for (std::size_t b = begin; b < end; b += kBlock) {
      if (mismatch.load(std::memory_order_relaxed)) return;  // another chunk has the answer
      const std::size_t n = std::min(kBlock, end - b);
      e.toDoubles(b, n, ev.data());
      a.toDoubles(b, n, av.data());
      for (std::size_t j = 0; j < n; ++j) {
        const double x = ev[j], y = av[j];
        const bool match = std::isfinite(x) && std::isfinite(y)
                               ? std::abs(y - x) <= tol.atol + tol.rtol * std::abs(x)
                               : nonFiniteMatches(y, x, a, b + j, poison);
        if (!match) {
          mismatch.store(true, std::memory_order_relaxed);
          return;
        }
      }
    }
  });
  return !mismatch.load();
}

}  // namespace crucible
