#pragma once
// Triton expressions for pointwise ops: what one element of a fused chain computes, in fp32.
// Written with functions every backend has (tl.exp, tl.sigmoid, tl.erf, tl.where, ...): tanh is
// 2 * sigmoid(2x) - 1, so neither libdevice nor a backend's tanh is needed.

#include <optional>
#include <string>
#include <vector>

#include "core/kernel_synth/op_graph.h"

namespace crucible::kernel_synth {

/// A float literal Triton and Python both read exactly ("0.5", "1e-05", "float('inf')").
std::string floatLiteral(double x);

/// The expression for `node` on its operands' expressions (`args[i]` for `node.inputs[i]`;
/// "None" for an absent optional operand). nullopt, with `why`, when its attributes cannot be
/// lowered.
std::optional<std::string> pointwiseExpr(const OpNode& node, const std::vector<std::string>& args,
                                         std::string& why);

}  // namespace crucible::kernel_synth
