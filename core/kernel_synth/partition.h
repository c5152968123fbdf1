#pragma once
// Fusion groups: which nodes of a traced graph one Triton kernel computes. Pointwise chains fuse
// with each other, into the epilogue of a matrix product, or into a row program (a reduction or
// normalisation over one dimension with the pointwise work before and after it on the same rows).
// Layout ops (transpose, reshape, ...) stay views on the host.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel_synth/op_graph.h"

namespace crucible::kernel_synth {

enum class GroupKind { View, Pointwise, Row, Matmul, Conv, Recurrent };
const char* groupKindName(GroupKind kind);

/// Pointwise ops that read by the element's coordinates (cat, flip, tril, triu, diag_embed):
/// each starts a pointwise group of its own, which no row program absorbs.
bool readsByCoordinates(const std::string& op);

/// What an op is to the partitioner; Unsupported ops make the graph unlowerable.
enum class OpKind { Meta, View, Pointwise, Row, Matmul, Conv, Recurrent, Unsupported };
OpKind opKind(const OpNode& node);

/// How a row op splits its input's shape into rows: the dimensions reduced within a row (sorted)
/// and, for group norm, one dimension cut into `splitParts` parts, each part's positions within
/// a row (channels in groups). Every other dimension tells rows apart.
struct RowReduction {
  std::vector<int> dims;
  int splitDim = -1;
  std::int64_t splitParts = 0;
  bool operator==(const RowReduction&) const = default;
};

/// A `dim` attribute of a rank-`rank` value as sorted non-negative dims: all of them where it is
/// absent, null or an empty list (torch's "every dim"); nullopt where it names a dim out of range
/// or twice.
std::optional<std::vector<int>> reducedDims(const nlohmann::json& dim, std::size_t rank);

/// For a row op: how it reduces its first input; nullopt when its attributes make it unlowerable
/// (a full reduction, several dims for an op that takes one).
std::optional<RowReduction> rowReduction(const OpNode& node, const OpGraph& graph);

struct FusionGroup {
  GroupKind kind = GroupKind::Pointwise;
  std::vector<int> nodes;           // indices into graph.nodes, in order
  Shape domain;                     // the shape the kernel's index space covers
  RowReduction reduce;              // row groups: what one row of `domain` is
  std::vector<std::string> stores;  // values of the group written to memory
};

struct Partition {
  std::vector<FusionGroup> groups;
  std::vector<std::string> unsupported;  // "line 12: torch.fft.rfft"
};

/// Groups the graph's nodes; anything it cannot lower is listed in `unsupported`.
Partition partition(const OpGraph& graph);

/// True when `shape` is `domain` reduced over `reduce`'s dims (kept as 1 or dropped); never for
/// a split reduction (its per-row values have no shape of their own).
bool isRowShape(const Shape& shape, const Shape& domain, const RowReduction& reduce);

}  // namespace crucible::kernel_synth
