#include "core/kernel_synth/lowering.h"

#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

std::optional<LoweredGroup> lowerGroup(const OpGraph& graph, const FusionGroup& group, int index,
                                       const Tiling& tiling, const HostContext& host,
                                       std::string& why) {
  const LoweringInput in{graph, group, index, tiling, host};
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
