#include "core/kernel_synth/lowering.h"

#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

std::optional<LoweredGroup> lowerGroup(const OpGraph& graph, const FusionGroup& group, int index,
                                       const Tiling& tiling, const HostContext& host,
                                       std::string& why) {
  switch (group.kind) {
    case GroupKind::View:
      return lowerView(graph, group, index, host, why);
    case GroupKind::Pointwise:
      return lowerPointwise(graph, group, index, tiling, host, why);
    case GroupKind::Row:
      return lowerRow(graph, group, index, tiling, host, why);
    case GroupKind::Matmul:
      return lowerMatmul(graph, group, index, tiling, host, why);
    case GroupKind::Conv:
      if (tiling.gemmConv) {
        // Implicit GEMM where it applies (ungrouped forward convolutions), else direct loops.
        std::string notGemm;
        if (tiling.channelsLast) {
          if (auto lowered = lowerConvGemmChannelsLast(graph, group, index, tiling, host, notGemm))
            return lowered;
        }
        if (auto lowered = lowerConvGemm(graph, group, index, tiling, host, notGemm))
          return lowered;
      }
      return lowerConv(graph, group, index, tiling, host, why);
  }
  why = "unknown group kind";
  return std::nullopt;
}

}  // namespace crucible::kernel_synth
