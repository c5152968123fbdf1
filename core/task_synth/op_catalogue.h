#pragma once
// The operator catalogue of the task synthesizer: every PyTorch operator a synthetic program may
// use, with its arity, the rule that relates its shapes, rank bounds and dtype rule. The table is
// data (op_catalogue.cpp); the shape model (shape_model.cpp) turns each rule into constraints and
// the writer (task_writer.cpp) fills in each operator's call template.

#include <span>
#include <string_view>

namespace crucible::task_synth {

/// The most dimensions a synthetic tensor has. Dimensions are right-aligned in a frame of this
/// many positions; the positions before a tensor's rank hold 1, which is what broadcasting does.
inline constexpr int kMaxRank = 4;

/// How an operator's output shape follows from its inputs (each is a block of constraints).
enum class ShapeRule {
  Same,             // out = in (pointwise, activations, layer_norm, tril ...)
  SameAlongDim,     // out = in, with a `dim` argument (softmax, cumsum, normalize, flip)
  SameLastDim,      // out = in, working along the last dim (layer_norm, rms_norm)
  Broadcast,        // out = broadcast of the inputs (binary and ternary pointwise)
  Equal,            // inputs and output share one shape (elementwise losses)
  Reduce,           // one dim reduced, keepdim chosen by the solver (sum, amax, argmax ...)
  BroadcastReduce,  // broadcast, then one dim reduced without keepdim (cosine_similarity)
  Matmul,           // [M, K] @ [K, N]
  Bmm,              // [B, M, K] @ [B, K, N]
  Linear,           // [..., K] -> [..., F] through nn.Linear(K, F)
  Conv,             // [N, C, *S] -> [N, O, *S'] through nn.ConvNd(C, O, k, stride, padding)
  Pool,             // [N, C, *S] -> [N, C, *S'] (kernel, stride, padding)
  AdaptivePool,     // [N, C, H, W] -> [N, C, h, w], h <= H, w <= W
  Transpose,        // two dims swapped
  Cat,              // two tensors joined along one dim
  Flatten,          // the last two dims merged
  GroupNorm,        // [N, C, ...] with C divisible by the number of groups
  BatchNorm,        // [N, C, ...] with at least two values per channel (batch statistics)
  InstanceNorm,     // [N, C, ...] with at least two values per (sample, channel)
};

/// The output's dtype; every input is float32.
enum class DtypeRule { Float, Index };

struct OpSpec {
  std::string_view name;  // torch / torch.nn.functional name, lower snake case (index.json)
  std::string_view call;  // Python template: {0} {1} {2} inputs, {dim} {dim1} {keepdim} ...
  int arity;
  ShapeRule rule;
  int minRank = 1;  // bounds on every input's rank
  int maxRank = kMaxRank;
  int flopsPerElement = 1;  // per output element, for the elementwise rules
  int minExtent = 1;        // smallest size of the dim an operator works along
  DtypeRule dtype = DtypeRule::Float;
  int spatialDims = 0;  // Conv, Pool: 1 or 2
};

/// The whole catalogue, in a fixed order (coverage reports and seeds depend on it).
std::span<const OpSpec> catalogue();

/// The operator named `name`, or nullptr.
const OpSpec* findOp(std::string_view name);

/// Whether the rule takes a `dim` argument the solver chooses.
bool hasDimArgument(ShapeRule rule);

/// Whether an operator with this rule owns an nn.Module (its parameters are built in __init__).
bool hasModule(ShapeRule rule);

/// The rank of the output, as an interval, when the inputs' ranks lie in [lo, hi]; used while
/// sampling to draw only inputs whose rank can fit. The solver decides the actual ranks.
struct RankRange {
  int lo = 1, hi = kMaxRank;
  bool empty() const { return lo > hi; }
  RankRange intersect(RankRange o) const;
};
RankRange outputRanks(const OpSpec& op, RankRange inputs);

}  // namespace crucible::task_synth
