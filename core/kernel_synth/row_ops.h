#pragma once
// What one reduction or normalisation computes inside a row program: kernel lines on the
// program's [ROWS, BLOCK_R] tile (`fmask` marks real elements, `R` is the row length, `cols` the
// position within the row), ending in `v_<node> = ...`.

#include <optional>
#include <string>
#include <vector>

#include "core/kernel_synth/op_graph.h"

namespace crucible::kernel_synth {

/// `args[i]` is the kernel expression of `node.inputs[i]` ("None" when absent). nullopt with
/// `why` for an op that has no row lowering.
std::optional<std::string> rowOpLines(const OpNode& node, const std::vector<std::string>& args,
                                      std::string& why);

/// A norm (layer, batch, group or instance) taken apart for a looped row program, which computes
/// the mean and the variance in passes over chunks of the row before normalising.
struct NormParts {
  std::string input;  // the normalised value's kernel expression
  /// `v_<node> = ...` from `v_<node>_c` (input minus the mean) and `v_<node>_var`, with the
  /// affine weight and bias.
  std::string apply;
};
/// nullopt for an op that is not a norm.
std::optional<NormParts> normParts(const OpNode& node, const std::vector<std::string>& args);

/// The operands a row op reads (batch and instance norm in training ignore running statistics).
bool rowOpReads(const OpNode& node, std::size_t input);

/// True for operands that follow the channel dimension (1) of the input: the weight, bias and
/// statistics of batch, instance and group norm.
bool rowOpChannelOperand(const OpNode& node, std::size_t input);

}  // namespace crucible::kernel_synth
