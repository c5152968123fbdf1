#pragma once
// What the lowerers of the group kinds (lower_*.cpp) share: a graph value's name, shape and dtype,
// the operands a kernel loads, a kernel's parameter list beside its launch arguments, the
// pointwise epilogue of a group, and host lines. Internal to core/kernel_synth.

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/kernel_synth/lowering.h"

namespace crucible::kernel_synth {

inline constexpr const char* kHost = "        ";  // forward's body
inline constexpr const char* kBody = "    ";      // a kernel's body

std::string var(const std::string& name);  // the Python name of a value: v_<name>
std::string join(const std::vector<std::string>& parts, const std::string& sep);
/// `text`'s lines one level deeper (kBody more).
std::string indented(const std::string& text);
Shape shapeOfValue(const OpGraph& g, const std::string& name);
std::optional<Shape> altShapeOfValue(const OpGraph& g, const std::string& name);
std::string dtypeOf(const OpGraph& g, const std::string& name);
bool isFloat(const std::string& dtype);
/// `.to(tl.float32)` for half-precision loads: the chain computes in fp32.
std::string widen(const std::string& dtype);
/// "  # op (line N)\n": where a kernel line comes from in the reference.
std::string origin(const OpNode& n);
/// "    v_name = expr  # op (line N)\n"
std::string statement(const OpNode& n, const std::string& expr);
/// An integer or list attribute as `n` ints (one int repeated; `fallback` where it is missing).
std::vector<int> intList(const nlohmann::json& v, std::size_t n, int fallback);

/// Where an operand is read relative to the element's coordinates, for the ops that read at
/// other coordinates: a concatenation's piece covers [pieceStart, pieceStop) of the output along
/// pieceDim and is read at the coordinate minus pieceStart; a flip reads dim d of extent e at
/// e - 1 - the coordinate.
struct ReadAt {
  int pieceDim = -1;
  std::int64_t pieceStart = 0, pieceStop = 0;
  std::vector<std::pair<int, std::int64_t>> reversed;  // (dim, extent)
  /// (dim, before, extent): read at the coordinate minus `before`, and zero where that falls
  /// outside [0, extent) (a padded operand).
  std::vector<std::tuple<int, std::int64_t, std::int64_t>> shifted;
};

/// A tensor operand read by a kernel: a pointer argument plus one stride per domain dimension.
struct KernelOperand {
  std::string value;      // graph value
  std::string hostView;   // Python expression of the broadcast view passed to the kernel
  std::string arg;        // kernel parameter name
  bool rowSpace = false;  // row programs: read once per row
  ReadAt at;              // pointwise groups: read at other coordinates than the element's
};

/// The shared bookkeeping of a group: values it computes, operands it reads.
class GroupState {
 public:
  GroupState(const OpGraph& graph, const FusionGroup& group);
  bool inside(const std::string& name) const { return inside_.count(name) > 0; }
  /// The kernel variable of an operand, registering an external load when needed.
  std::string operand(const Operand& o, bool rowSpace, const std::string& hostView);
  /// The kernel variable of an operand read at other coordinates (always a load of its own).
  std::string operandAt(const std::string& ref, const std::string& hostView, const ReadAt& at);
  std::vector<KernelOperand> operands() const;

 private:
  std::set<std::string> inside_;
  std::map<std::string, KernelOperand> loads_;
  std::vector<std::string> order_;
};

/// What every lowerer is given: the graph, the group and its index, the tiling and the host.
struct LoweringInput {
  const OpGraph& g;
  const FusionGroup& group;
  int index;
  const Tiling& t;
  const HostContext& host;
};

/// A lowerer's input with the group's bookkeeping: the common part of every lowering's plan
/// (the group's first node is the one the kernel is built around).
struct GroupLowering {
  explicit GroupLowering(const LoweringInput& in)
      : g(in.g),
        group(in.group),
        index(in.index),
        t(in.t),
        host(in.host),
        head(in.g.nodes[in.group.nodes.front()]),
        st(in.g, in.group) {}

  const OpGraph& g;
  const FusionGroup& group;
  int index;
  const Tiling& t;
  const HostContext& host;
  const OpNode& head;
  GroupState st;
};

/// A kernel's parameters and, in the same order, the launch's arguments.
struct KernelSignature {
  std::vector<std::string> params, args;
  void add(const std::string& param, const std::string& arg) {
    params.push_back(param);
    args.push_back(arg);
  }
  /// One pointer per external operand and per stored value: p_x0, ..., out_<value>.
  void addPointers(const std::vector<KernelOperand>& ops, const std::vector<std::string>& stores,
                   const std::function<std::string(const std::string&)>& storeArg);
  /// `<arg>_s0 .. <arg>_s{rank-1}` for each operand, passed as `*_<arg>.stride()`.
  void addStrides(const std::vector<KernelOperand>& ops, int rank);
  /// `out_<value>_s0 .. _s{rank-1}` for each stored value, passed as `*v_<value>.stride()`.
  void addOutputStrides(const std::vector<std::string>& stores, int rank);
  void constexprs(const std::vector<std::string>& names);
  std::string def(const std::string& name) const;  // "@triton.jit\ndef name(...):\n"
};

/// Names of the group's ops, "linear -> add -> relu".
std::string nodeList(const OpGraph& g, const FusionGroup& group);
/// The host line allocating a value's output tensor.
std::string allocate(const OpGraph& g, const std::string& name, const HostContext& host);
/// The host expression of `name` broadcast to `target` (a host tuple expression).
std::string broadcastTo(const HostContext& host, const std::string& name,
                        const std::string& target);
/// A per-channel vector (a norm's weight or statistics) as a view along dim 1 of a rank-`rank`
/// `target`.
std::string channelView(const HostContext& host, const std::string& name, int rank,
                        const std::string& target);
/// How an epilogue sees an operand `ref` from outside its group on the host: `channel` for one
/// that follows dim 1 of its node's input (batch norm's statistics and affine parameters).
using EpilogueView = std::function<std::string(const std::string& ref, bool channel)>;
/// A view function for lowerEpilogue: operands broadcast to `dom` (a host tuple of `rank` dims),
/// channel operands along its dim 1.
EpilogueView broadcastView(const HostContext& host, const std::string& dom, int rank);
/// The pointwise nodes of `group` after its first (an epilogue on the head op's result, v_head),
/// one statement each; operands from outside are registered in `st` with `view(ref, channel)`
/// as their host view. False with `why` when one cannot be lowered.
bool lowerEpilogue(const OpGraph& g, const FusionGroup& group, GroupState& st,
                   const EpilogueView& view, std::string& body, std::string& why);
/// The kernel lines loading each operand at `coords` (one expression per domain dimension).
std::string loadOperands(const OpGraph& g, const std::vector<KernelOperand>& ops,
                         const std::vector<std::string>& coords, const std::string& mask);
/// The kernel lines loading each operand at the flat `index`: for operands laid out like the
/// output (contiguous, same shape), where no per-element coordinates are needed.
std::string loadOperandsFlat(const OpGraph& g, const std::vector<KernelOperand>& ops,
                             const std::string& index, const std::string& mask);
/// The kernel lines storing each of `stores` at `coords` (one expression per dimension), through
/// the strides addOutputStrides passed.
std::string storeOutputs(const std::vector<std::string>& stores,
                         const std::vector<std::string>& coords, const std::string& mask);
/// The host lines binding `_<arg> = <view>` for each operand.
std::string bindOperands(const std::vector<KernelOperand>& ops);
/// ", num_warps=W[, num_stages=S]" for a launch.
std::string launchOptions(const Tiling& t);
/// The same for a tl.dot K loop over BLOCK_M x BLOCK_K and BLOCK_K x BLOCK_N tiles of
/// `elementBytes` each (all parts of a split operand together): every pipeline stage holds one
/// of each in shared memory, so the stages become `_stages(S, stage bytes, device)`, at most S
/// and as many as the GPU's shared memory per block holds. A GPU with less than the tiling
/// assumed then still compiles it.
std::string pipelinedLaunchOptions(const Tiling& t, int elementBytes, const std::string& device);
/// Kernel lines splitting the fp32 tile `v` for bf16x3: bfloat16 hi (v rounded) stored at
/// `dst + at`, and the rest, rounded to bfloat16 too, at `lo + at`, both under `mask`.
std::string bf16SplitLines(const std::string& dst, const std::string& lo, const std::string& mask);
/// The bytes of one element of a tensor of `dtype`.
int dtypeBytes(const std::string& dtype);

// Tiled matrix products (lower_matmul.cpp), shared with implicit-GEMM convolutions.
/// `tl.dot(a_tile, b_tile, input_precision=...)` for the tiling.
std::string dotCall(const Tiling& t);
/// Kernel lines setting pid_m and pid_n (grouped along M when t.groupM > 1) over an m x n grid.
std::string programOrder(const Tiling& t, const std::string& m, const std::string& n);
/// The launch grid (host expression) for an m x n product over `batch` matrices.
std::string productGrid(const Tiling& t, const std::string& m, const std::string& n,
                        const std::string& batch);
/// ", BLOCK_M=.., BLOCK_N=.., BLOCK_K=..[, GROUP_M=..]" for a launch.
std::string productConstants(const Tiling& t);
/// The tiling in a plan line.
std::string productLabel(const Tiling& t);
/// `t` fitted to a product of `rows` x `columns` outputs, where t.fitToShape asks for it: with
/// fewer columns than BLOCK_N the tile narrows to the next power of two of them (16 at least,
/// tl.dot's least), so tensor cores are not spent on masked columns; with `widen`, the width it
/// gives up goes to BLOCK_M (up to 256) while there are rows enough for a GPU's worth of
/// programs (products, whose tiles are plain loads; an implicit-GEMM convolution's gathered
/// tile costs registers per row, so it keeps its BLOCK_M).
Tiling fitProductTile(Tiling t, std::int64_t rows, std::int64_t columns, bool widen);

// The lowerers of each group kind (lower_<kind>.cpp), one signature: nullopt with `why` when
// some node of the group cannot be lowered that way.
std::optional<LoweredGroup> lowerPointwise(const LoweringInput& in, std::string& why);
std::optional<LoweredGroup> lowerRow(const LoweringInput& in, std::string& why);
std::optional<LoweredGroup> lowerMatmul(const LoweringInput& in, std::string& why);
std::optional<LoweredGroup> lowerConv(const LoweringInput& in, std::string& why);
std::optional<LoweredGroup> lowerConvGemmChannelsLast(const LoweringInput& in, std::string& why);
std::optional<LoweredGroup> lowerConvGemm(const LoweringInput& in, std::string& why);
std::optional<LoweredGroup> lowerView(const LoweringInput& in, std::string& why);
std::optional<LoweredGroup> lowerRecurrent(const LoweringInput& in, std::string& why);

}  // namespace crucible::kernel_synth
