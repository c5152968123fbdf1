#include "core/verify/compare.h"

#include <algorithm>
#include <cmath>

namespace crucible {

namespace {
std::string describe(const TensorData& t) {
  return std::string(toString(t.dtype())) + " " + t.shapeText();
}

bool withinAllClose(double a, double e, const Tolerance& tol) {
  if (std::isnan(a) || std::isnan(e)) return false;
  if (std::isinf(a) || std::isinf(e)) return a == e;
  return std::abs(a - e) <= tol.atol + tol.rtol * std::abs(e);
}

/// Fills a comparison's error histogram and mismatch map element by element.
class ErrorPicture {
 public:
  ErrorPicture(TensorComparison& c, const std::vector<std::int64_t>& shape) : c_(c) {
    c.cols =
        shape.empty() ? 1 : static_cast<std::uint64_t>(std::max<std::int64_t>(shape.back(), 1));
    c.rows = c.elements / c.cols;
    c.mapRows = std::min(c.rows, TensorComparison::kMapSide);
    c.mapCols = std::min(c.cols, TensorComparison::kMapSide);
    c.errorHistogram.assign(TensorComparison::kHistogramBuckets, 0);
    c.mismatchMap.assign(c.mapRows * c.mapCols, 0);
    cellSizes_.assign(c.mismatchMap.size(), 0);
  }
  void add(std::size_t i, double diff, bool match) {
    int bucket = TensorComparison::kHistogramBuckets - 1;
    if (std::isfinite(diff)) {
      bucket = diff < 1e-8 ? 0
                           : std::clamp(static_cast<int>(std::floor(std::log10(diff))) + 9, 1,
                                        TensorComparison::kHistogramBuckets - 1);
    }
    ++c_.errorHistogram[bucket];
    if (c_.mapRows == 0 || c_.mapCols == 0) return;
    const std::uint64_t r = i / c_.cols, col = i % c_.cols;
    const std::size_t cell = (r * c_.mapRows / c_.rows) * c_.mapCols + col * c_.mapCols / c_.cols;
    ++cellSizes_[cell];
    if (!match) c_.mismatchMap[cell] += 1;
  }
  void finish() {
    for (std::size_t k = 0; k < cellSizes_.size(); ++k) {
      if (cellSizes_[k]) c_.mismatchMap[k] /= static_cast<double>(cellSizes_[k]);
    }
  }

 private:
  TensorComparison& c_;
  std::vector<std::uint64_t> cellSizes_;
};

TensorComparison compareTensors(std::size_t index, const TensorData& e, const TensorData& a,
                                const ToleranceTable& tolerances, MatchRule rule) {
  TensorComparison c;
  c.index = index;
  c.expected = describe(e);
  c.actual = describe(a);
  c.shapeMatch = e.shape() == a.shape();
  c.dtypeMatch = e.dtype() == a.dtype();
  c.elements = e.numel();
  // Poison is counted on whatever the candidate returned, even when the shape is wrong.
  if (auto poison = poisonBits(a.dtype())) {
    for (std::size_t i = 0; i < a.numel(); ++i) c.poisoned += a.bitsAt(i) == *poison;
  }
  if (!c.shapeMatch || !c.dtypeMatch) return c;

  const Tolerance tol = tolerances.forDType(e.dtype());
  ErrorPicture picture(c, e.shape());
  double sumAbs = 0, diffNorm2 = 0, refNorm2 = 0;
  for (std::size_t i = 0; i < e.numel(); ++i) {
    const double ev = e.at(i), av = a.at(i);
    if (!std::isfinite(av)) ++c.nonFiniteActual;
    const bool match = withinAllClose(av, ev, tol) ||
                       (std::isnan(av) && std::isnan(ev) && a.bitsAt(i) != poisonBits(a.dtype()));
    const double diff = std::isfinite(av) && std::isfinite(ev) ? std::abs(av - ev)
                        : match                                ? 0.0
                                                               : INFINITY;
    if (!match) {
      ++c.mismatches;
      if (!c.firstMismatch) c.firstMismatch = i;
    }
    picture.add(i, diff, match);
    c.maxAbsError = std::max(c.maxAbsError, diff);
    if (std::isfinite(ev) && ev != 0) c.maxRelError = std::max(c.maxRelError, diff / std::abs(ev));
    sumAbs += std::isfinite(diff) ? diff : 0;
    diffNorm2 += std::isfinite(diff) ? diff * diff : INFINITY;
    refNorm2 += std::isfinite(ev) ? ev * ev : 0;
  }
  picture.finish();
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
}  // namespace

Tolerance ToleranceTable::forDType(DType dtype) const {
  switch (dtype) {
    case DType::Float16:
    case DType::BFloat16:
      return fp16;
    case DType::Float32:
    case DType::Float64:
      return fp32;
    default:
      return Tolerance{0, 0};
  }
}

bool PackComparison::ok() const {
  return structureMatch &&
         std::all_of(tensors.begin(), tensors.end(), [](const auto& t) { return t.ok; });
}

std::uint64_t PackComparison::poisoned() const {
  std::uint64_t total = 0;
  for (const auto& t : tensors) total += t.poisoned;
  return total;
}

nlohmann::json PackComparison::toJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : tensors) {
    nlohmann::json entry = {
        {"index", t.index},
        {"expected", t.expected},
        {"actual", t.actual},
        {"ok", t.ok},
        {"elements", t.elements},
        {"mismatches", t.mismatches},
        {"poisoned", t.poisoned},
        {"non_finite", t.nonFiniteActual},
        {"max_abs_error",
         std::isfinite(t.maxAbsError) ? nlohmann::json(t.maxAbsError) : nlohmann::json("inf")},
        {"max_rel_error",
         std::isfinite(t.maxRelError) ? nlohmann::json(t.maxRelError) : nlohmann::json("inf")},
        {"mean_abs_error", t.meanAbsError},
        {"relative_norm_error", std::isfinite(t.relativeNormError)
                                    ? nlohmann::json(t.relativeNormError)
                                    : nlohmann::json("inf")},
        {"first_mismatch",
         t.firstMismatch ? nlohmann::json(*t.firstMismatch) : nlohmann::json(nullptr)}};
    if (t.mismatches > 0) {
      nlohmann::json edges = nlohmann::json::array();
      for (int k = -8; k <= 2; ++k) edges.push_back(k);
      entry["error_histogram"] = {{"log10_edges", edges}, {"counts", t.errorHistogram}};
      entry["mismatch_map"] = {{"rows", t.rows},
                               {"cols", t.cols},
                               {"map_rows", t.mapRows},
                               {"map_cols", t.mapCols},
                               {"fraction", t.mismatchMap}};
    }
    list.push_back(std::move(entry));
  }
  return {{"ok", ok()},
          {"structure_match", structureMatch},
          {"structure_note", structureNote},
          {"tensors", list}};
}

PackComparison comparePacks(const ValuePack& expected, const ValuePack& actual,
                            const ToleranceTable& tolerances, MatchRule rule) {
  PackComparison result;
  const auto& e = expected.tensors();
  const auto& a = actual.tensors();
  if (e.size() != a.size()) {
    result.structureMatch = false;
    result.structureNote = "expected " + std::to_string(e.size()) + " output tensor(s), got " +
                           std::to_string(a.size());
  } else if (expected.structure() != actual.structure()) {
    result.structureMatch = false;
    result.structureNote = "outputs differ in shape, dtype or structure: expected " +
                           expected.structure().dump() + ", got " + actual.structure().dump();
  }
  const std::size_t n = std::min(e.size(), a.size());
  for (std::size_t i = 0; i < n; ++i) {
    result.tensors.push_back(compareTensors(i, e[i], a[i], tolerances, rule));
  }
  // Non-tensor leaves (numbers returned beside tensors) were compared exactly by structure().
  return result;
}

bool bitwiseEqual(const ValuePack& a, const ValuePack& b) {
  if (a.structure() != b.structure()) return false;
  for (std::size_t i = 0; i < a.tensors().size(); ++i) {
    const auto& x = a.tensors()[i];
    const auto& y = b.tensors()[i];
    for (std::size_t k = 0; k < x.numel(); ++k) {
      if (x.bitsAt(k) != y.bitsAt(k)) return false;
    }
  }
  return true;
}

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
      double mean = 0;
      for (std::size_t j = 0; j < t.numel(); ++j) mean += t.at(j);
      mean /= static_cast<double>(t.numel());
      for (std::size_t j = 0; j < t.numel(); ++j) {
        const double x = t.at(j);
        nearZero += std::abs(x) <= atol;
        nearMean += std::abs(x - mean) <= atol;
      }
      total += t.numel();
      if (k > 0 && i < trials[k - 1]->tensors().size()) {
        const auto& prev = trials[k - 1]->tensors()[i];
        if (prev.numel() == t.numel()) {
          for (std::size_t j = 0; j < t.numel(); ++j) {
            acrossSame += std::abs(t.at(j) - prev.at(j)) <= atol;
          }
          acrossTotal += t.numel();
        }
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
