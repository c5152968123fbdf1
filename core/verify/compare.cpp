#include "core/verify/compare.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "core/util/parallel_chunks.h"
#include "core/verify/tensor_compare.h"

namespace crucible {

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
        {"atol", t.atol},
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

namespace {
// Bytes per chunk of a bitwise comparison.
constexpr std::size_t kByteChunk = std::size_t{4} << 20;

/// Dtypes and shapes of every tensor equal, pairwise. structure() sees only the tensors that
/// the value refers to; this sees them all.
bool sameTensorLayout(const ValuePack& a, const ValuePack& b) {
  const auto& x = a.tensors();
  const auto& y = b.tensors();
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i].dtype() != y[i].dtype() || x[i].shape() != y[i].shape()) return false;
  }
  return true;
}

bool sameBytes(std::span<const std::byte> x, std::span<const std::byte> y) {
  std::atomic<bool> differ{false};
  forEachChunk((x.size() + kByteChunk - 1) / kByteChunk, [&](std::size_t i) {
    if (differ.load(std::memory_order_relaxed)) return;  // another chunk has the answer
    const std::size_t begin = i * kByteChunk;
    const std::size_t n = std::min(kByteChunk, x.size() - begin);
    if (std::memcmp(x.data() + begin, y.data() + begin, n) != 0) {
      differ.store(true, std::memory_order_relaxed);
    }
  });
  return !differ.load();
}
}  // namespace

bool packsMatch(const ValuePack& expected, const ValuePack& actual,
                const ToleranceTable& tolerances, MatchRule rule) {
  // RelativeNorm judges by norms over whole tensors: only the full pass can answer.
  if (rule != MatchRule::AllClose) return comparePacks(expected, actual, tolerances, rule).ok();
  if (!sameTensorLayout(expected, actual) || expected.structure() != actual.structure()) {
    return false;
  }
  for (std::size_t i = 0; i < expected.tensors().size(); ++i) {
    const auto& e = expected.tensors()[i];
    if (!allClose(e, actual.tensors()[i], tolerances.forDType(e.dtype()))) return false;
  }
  return true;
}

bool bitwiseEqual(const ValuePack& a, const ValuePack& b) {
  if (!sameTensorLayout(a, b) || a.structure() != b.structure()) return false;
  for (std::size_t i = 0; i < a.tensors().size(); ++i) {
    if (!sameBytes(a.tensors()[i].bytes(), b.tensors()[i].bytes())) return false;
  }
  return true;
}

}  // namespace crucible
