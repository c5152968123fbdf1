#pragma once
// One fusion group as one Triton kernel and the host lines that launch it. Every tensor operand
// reaches the kernel as a pointer plus strides of a view broadcast to the kernel's index space
// (stride 0 along broadcast dimensions), so transposes and broadcasts need no copies.

#include <functional>
#include <optional>
#include <string>

#include "core/kernel_synth/op_graph.h"
#include "core/kernel_synth/partition.h"

namespace crucible::kernel_synth {

/// Tile choices; each kind of group reads its own fields.
inline constexpr const char* kSplitPrecision = "tf32x3-split";
inline constexpr const char* kBf16SplitPrecision = "bf16x3-split";

struct Tiling {
  int block = 1024;                           // pointwise and direct loops: elements per program
  int rows = 1;                               // row programs: rows per program
  int blockM = 32, blockN = 32, blockK = 32;  // matrix products and implicit-GEMM convolutions
  int warps = 4;
  int stages = 0;  // software pipelining depth of K loops (num_stages); 0 leaves Triton's default
  /// tl.dot's input_precision: "ieee" (exact fp32 products) or "tf32x3" (three TF32 passes on
  /// NVIDIA tensor cores, about fp32's accuracy); the CPU backends compute ieee either way.
  /// kSplitPrecision: tf32x3 with the operands split once beforehand, where the form copies
  /// them anyway (channels-last convolutions); elsewhere it is tf32x3.
  /// kBf16SplitPrecision: the same over bfloat16 parts (three bf16 products, twice TF32's
  /// tensor-core rate), where the form copies the operands; elsewhere it is tf32x3.
  std::string precision = "ieee";
  bool gemmConv = false;  // convolutions as implicit GEMM through tl.dot, not direct loops
  /// implicit GEMM over channels-last copies of the input and weight (lower_conv_gemm_cl.cpp):
  /// the GPU form, whose operands tensor cores read along K
  bool channelsLast = false;
  int groupM = 1;  // products: row tiles per group in the launch order (L2 reuse); 1 = none
  /// The tile adapts to the group's shape, as a GPU wants: a product with fewer output columns
  /// than BLOCK_N narrows its tile (fitProductTile), and a row program whose rows are short
  /// holds enough of them to give each thread work. The CPU menus keep their tiles as written.
  bool fitToShape = false;
};

/// One tiling per kind of group: what one candidate is made of.
struct TileSet {
  Tiling pointwise, row, matmul, conv;
};

/// What the lowering needs from the candidate being written.
struct HostContext {
  std::function<std::string(const std::string&)> value;  // a value's Python expression
  /// A shape as a Python tuple expression (batch dims as multiples of `nb`); throws GraphError
  /// when a dimension is not a multiple of the batch.
  std::function<std::string(const Shape&, const std::optional<Shape>&)> shape;
  std::string device;  // Python expression of the device to allocate on
};

struct LoweredGroup {
  std::string kernel;  // @triton.jit source; empty for views
  std::string launch;  // host lines (8-space indent), allocations and launch
  std::string plan;    // one line for humans
};

/// Lowers group `index`; nullopt with `why` when some node of it cannot be lowered.
std::optional<LoweredGroup> lowerGroup(const OpGraph& graph, const FusionGroup& group, int index,
                                       const Tiling& tiling, const HostContext& host,
                                       std::string& why);

}  // namespace crucible::kernel_synth
