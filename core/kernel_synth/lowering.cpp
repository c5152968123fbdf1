#include "core/kernel_synth/lowering.h"

#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

namespace {

/// The product tile fitted to the outputs of a product or convolution group (its first node):
/// columns are a product's last dim, a convolution's channels.
Tiling fittedToGroup(const OpGraph& graph, const FusionGroup& group, const Tiling& t) {
  if (!t.fitToShape || group.nodes.empty()) return t;
  if (group.kind != GroupKind::Matmul && group.kind != GroupKind::Conv) return t;
  const Shape& shape = graph.nodes[group.nodes.front()].shape;
  const std::size_t at = group.kind == GroupKind::Conv ? 1 : shape.size() - 1;
  if (shape.size() < 2 || shape[at] <= 0) return t;
  std::int64_t all = 1;
  for (auto d : shape) all *= d;
  return fitProductTile(t, all / shape[at], shape[at], group.kind == GroupKind::Matmul);
}

}  // namespace

std::optional<LoweredGroup> lowerGroup(const OpGraph& graph, const FusionGroup& group, int index,
                                       const Tiling& tiling, const HostContext& host,
                                       std::string& why) {
  const Tiling fitted = fittedToGroup(graph, group, tiling);
  const LoweringInput in{graph, group, index, fitted, host};
  switch (group.kind) {
    case GroupKind::View:
      return lowerView(in, why);
    case GroupKind::Pointwise:
      return lowerPointwise(in, why);
    case GroupKind::Row:
      return lowerRow(in, why);
    case GroupKind::Matmul:
      return lowerMatmul(in, why);
    case GroupKind::Recurrent:
      return lowerRecurrent(in, why);
    case GroupKind::Conv:
      if (tiling.gemmConv) {
        // Implicit GEMM where it applies (ungrouped forward convolutions), else direct loops.
        std::string notGemm;
        if (tiling.channelsLast) {
          if (auto lowered = lowerConvGemmChannelsLast(in, notGemm)) return lowered;
        }
        if (auto lowered = lowerConvGemm(in, notGemm)) return lowered;
      }
      return lowerConv(in, why);
  }
  why = "unknown group kind";
  return std::nullopt;
}

}  // namespace crucible::kernel_synth
