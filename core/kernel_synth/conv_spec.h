#pragma once
// A convolution or pooling node's geometry, read from its traced attributes and shapes: which
// kind of window loop it is, the spatial window, stride, padding and dilation, and its operands.

#include <optional>
#include <string>
#include <vector>

#include "core/kernel_synth/op_graph.h"

namespace crucible::kernel_synth {

struct ConvSpec {
  enum class Kind { Conv, Transposed, MaxPool, AvgPool, AdaptiveAvgPool, AdaptiveMaxPool };
  Kind kind = Kind::Conv;
  int spatial = 2;                            // spatial dims (1, 2 or 3)
  std::vector<int> window, stride, pad, dil;  // adaptive: window is the largest window
  std::string input, weight, bias;            // value names; weight/bias empty when absent
  int groups = 1;
  bool pool() const { return kind != Kind::Conv && kind != Kind::Transposed; }
  /// Adaptive pools: each output's window from the input and output extents.
  bool adaptive() const { return kind == Kind::AdaptiveAvgPool || kind == Kind::AdaptiveMaxPool; }
  bool takesMax() const { return kind == Kind::MaxPool || kind == Kind::AdaptiveMaxPool; }
  int windowSize() const;
  /// Implicit GEMM (lower_conv_gemm.cpp) covers ungrouped convolutions, transposed or not.
  bool gemmApplies() const { return !pool() && groups == 1; }
  /// The channels-last form (lower_conv_gemm_cl.cpp) covers those over 1 to 3 spatial dims:
  /// transposed ones of stride 1 as forward convolutions (flippedForward), strided ones only in
  /// 1-D and 2-D and without dilation (their taps then fall into one class per output position
  /// modulo the stride).
  bool channelsLastApplies() const;
  /// A transposed convolution of stride 1 is a forward one over the same input: output o takes
  /// input o + P - k D through tap k, which is o - P' + k' D with k' = K - 1 - k (the taps in
  /// reverse order) and P' = (K - 1) D - P; output padding only widens the output, whose extra
  /// positions read past the input's end (zeros).
  bool flippedForward() const;
  /// This transposed convolution as that forward one: its padding P'; the taps' order is the
  /// lowerer's to reverse.
  ConvSpec asFlippedForward() const;
  /// The kernel's name for spatial dim i: "d", "h", "w" (3-D), "h", "w" (2-D) or "w" (1-D).
  std::string axis(int i) const { return std::string(1, "dhw"[3 - spatial + i]); }
  /// Kernel lines taking `index` apart into output coordinates o<axis> (the last fastest), with
  /// what is left (channel and batch) in `rem`.
  std::string outputCoordinates(const std::string& index) const;
  /// The window's constexpr parameters ("Kh", "Sh", "Ph", "Dh", ...) and their launch values.
  std::vector<std::string> constantNames() const;
  std::string launchConstants() const;
};

/// nullopt with `why` for a node it cannot lower (an unbatched input, padding by name,
/// ceil_mode, ...).
std::optional<ConvSpec> convSpec(const OpGraph& g, const OpNode& node, std::string& why);

}  // namespace crucible::kernel_synth
