#pragma once
// Fusion groups: which nodes of a traced graph one Triton kernel computes. Pointwise chains fuse
// with each other, into the epilogue of a matrix product, or into a row program (a reduction or
// normalisation over one dimension with the pointwise work before and after it on the same rows).
// Layout ops (transpose, reshape, ...) stay views on the host.

#include <string>
#include <vector>

#include "core/synth/op_graph.h"

namespace crucible::synth {

enum class GroupKind { View, Pointwise, Row, Matmul, Conv };
const char* groupKindName(GroupKind kind);

/// What an op is to the partitioner; Unsupported ops make the graph unlowerable.
enum class OpKind { Meta, View, Pointwise, Row, Matmul, Conv, Unsupported };
OpKind opKind(const OpNode& node);

/// For a row op: the dimension it reduces over (non-negative) in its first input's shape; -1 when
/// its attributes make it unlowerable (several dims, a full reduction).
int rowDim(const OpNode& node, const OpGraph& graph);

struct FusionGroup {
  GroupKind kind = GroupKind::Pointwise;
  std::vector<int> nodes;           // indices into graph.nodes, in order
  Shape domain;                     // the shape the kernel's index space covers
  int reduceDim = -1;               // row groups: the reduced dimension of `domain`
  std::vector<std::string> stores;  // values of the group written to memory
};

struct Partition {
  std::vector<FusionGroup> groups;
  std::vector<std::string> unsupported;  // "line 12: torch.fft.rfft"
};

/// Groups the graph's nodes; anything it cannot lower is listed in `unsupported`.
Partition partition(const OpGraph& graph);

/// True when `shape` is `domain` reduced over `dim` (kept as 1 or dropped).
bool isRowShape(const Shape& shape, const Shape& domain, int dim);

}  // namespace crucible::synth
