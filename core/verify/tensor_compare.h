#pragma once
// One expected tensor against one actual tensor, element by element: outputs run to a billion
// elements, so the pass is cut into fixed-size chunks run on several threads
// (core/util/parallel_chunks), each with its own counts, sums and picture, merged in chunk
// order. The chunk size does not depend on the thread count, so every machine gets the same
// statistics to the last bit.

#include <cstddef>

#include "core/verify/compare.h"
#include "core/verify/value_pack.h"

namespace crucible {

/// Elements per chunk: big enough that a thread's start-up is noise, small enough that a
/// gigabyte gives every thread of a large machine many chunks. A tensor of one chunk or less is
/// compared on the calling thread alone.
inline constexpr std::size_t kCompareChunk = std::size_t{1} << 18;

/// The chunks of a pass over `numel` elements.
inline constexpr std::size_t compareChunks(std::size_t numel) {
  return (numel + kCompareChunk - 1) / kCompareChunk;
}

/// The root mean square of `t`'s finite elements (0 for none).
double rootMeanSquare(const TensorData& t);

/// `tol` with its absolute part raised to rtol times the expected output's root mean square:
/// the tolerance every element is held to (compareTensors, allClose).
Tolerance scaledTolerance(Tolerance tol, const TensorData& expected);

/// The full comparison of tensor `index`: counts, errors, the picture and the verdict by `rule`.
TensorComparison compareTensors(std::size_t index, const TensorData& expected,
                                const TensorData& actual, const ToleranceTable& tolerances,
                                MatchRule rule);

/// Whether compareTensors would count no mismatch (the AllClose verdict), stopping at the first
/// element that does not match. Shapes and dtypes must already be known equal.
bool allClose(const TensorData& expected, const TensorData& actual, const Tolerance& tol);

/// Elements of `t` still holding the worker's poison bits (0 for a dtype without poison).
std::uint64_t countPoisoned(const TensorData& t);

}  // namespace crucible
