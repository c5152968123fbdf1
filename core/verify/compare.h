#pragma once
// Comparing value packs: the candidate's outputs against the reference's, in the judge's own
// process. Statistics are kept so that a user sees where and how much a candidate is wrong.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/verify/value_pack.h"

namespace crucible {

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};

/// Per-dtype tolerances (KernelBench's current ones by default: fp32 1e-4, fp16/bf16 1e-2).
struct ToleranceTable {
  Tolerance fp32{1e-4, 1e-4};
  Tolerance fp16{1e-2, 1e-2};
  Tolerance forDType(DType dtype) const;
};

/// How the comparison decides a tensor matches.
enum class MatchRule {
  AllClose,      // |a - e| <= atol' + rtol * |e| for every element (NaN never matches), where
                 // atol' = max(atol, rtol * rms(e)): absolute errors judged at the output's scale
  RelativeNorm,  // ||a - e||2 <= rtol * ||e||2 (degenerate references)
};

struct TensorComparison {
  std::size_t index = 0;
  bool shapeMatch = true;
  bool dtypeMatch = true;
  std::string expected;  // "float32 [16, 256]"
  std::string actual;
  std::uint64_t elements = 0;
  std::uint64_t mismatches = 0;
  std::uint64_t poisoned = 0;  // elements still holding the worker's poison bits
  std::uint64_t nonFiniteActual = 0;
  double maxAbsError = 0;
  double maxRelError = 0;
  double meanAbsError = 0;
  double relativeNormError = 0;
  double atol = 0;  // the absolute tolerance applied: the dtype's, scaled to the output's size
  std::optional<std::uint64_t> firstMismatch;  // flat index
  bool ok = false;
  // Where and how much it is wrong, for a picture of the error (kept in JSON only for a tensor
  // with mismatches). The histogram counts |actual - expected| per decade: bucket 0 below
  // 1e-8, bucket k in [1e(k-9), 1e(k-8)) for k = 1..10, the last at or above 1e2 or not finite.
  // The map views the tensor as [rows = elements / last dim, cols = last dim] and folds it into
  // at most kMapSide x kMapSide cells, each the share of its elements that mismatch.
  static constexpr int kHistogramBuckets = 12;
  static constexpr std::uint64_t kMapSide = 32;
  std::vector<std::uint64_t> errorHistogram;
  std::uint64_t rows = 0, cols = 0, mapRows = 0, mapCols = 0;
  std::vector<double> mismatchMap;  // mapRows x mapCols, row-major
};

struct PackComparison {
  bool structureMatch = true;
  std::string structureNote;
  std::vector<TensorComparison> tensors;

  bool ok() const;
  std::uint64_t poisoned() const;
  nlohmann::json toJson() const;
};

PackComparison comparePacks(const ValuePack& expected, const ValuePack& actual,
                            const ToleranceTable& tolerances, MatchRule rule = MatchRule::AllClose);

/// comparePacks(...).ok(), for a yes or no: under AllClose it stops at the first element that
/// does not match and keeps no statistics.
bool packsMatch(const ValuePack& expected, const ValuePack& actual,
                const ToleranceTable& tolerances, MatchRule rule = MatchRule::AllClose);

/// True when both packs have the same structure and identical tensor bytes.
bool bitwiseEqual(const ValuePack& a, const ValuePack& b);

/// Why a reference's outputs cannot be judged with an absolute tolerance (METR's gates).
struct Degeneracy {
  bool degenerate = false;
  double nearZeroFraction = 0;      // share of elements with |x| <= atol
  double nearMeanFraction = 0;      // share within atol of the tensor's mean
  double acrossTrialsFraction = 0;  // share within atol of the previous trial's output
  std::string reason;
  nlohmann::json toJson() const;
};

/// Assesses the reference's outputs over the trials (each a pack of the same structure), in
/// chunks on several threads (core/verify/degeneracy.cpp).
Degeneracy assessDegeneracy(const std::vector<const ValuePack*>& trials,
                            const ToleranceTable& tolerances);

}  // namespace crucible
