// Views (transpose, permute, reshape, ...): layout bookkeeping on the host; no data moves, since
// kernels address every operand through its strides.
#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

using nlohmann::json;

std::optional<LoweredGroup> lowerView(const LoweringInput& in, std::string& why) {
  const auto& [g, group, index, t, host] = in;
  const OpNode& n = g.nodes[group.nodes.front()];
  if (n.inputs.empty() || !n.inputs[0].isRef()) {
    why = n.op + " of a constant";
    return std::nullopt;
  }
  const std::string x = host.value(n.inputs[0].ref);
  const json& at = n.attrs;
  std::string e;
  if (n.op == "transpose") {
    e = x + ".transpose(" + at.value("dim0", json(0)).dump() + ", " +
        at.value("dim1", json(1)).dump() + ")";
  } else if (n.op == "t") {
    e = x + ".t()";
  } else if (n.op == "permute") {
    const json& dims = at.value("dims", json());
    if (!dims.is_array()) {
      why = "permute with computed dims";
      return std::nullopt;
    }
    std::vector<std::string> ds;
    for (const auto& dd : dims) ds.push_back(dd.dump());
    e = x + ".permute(" + join(ds, ", ") + ")";
  } else if (n.op == "index") {
    // Basic indexing only (the trace stage writes ints, constant slices, None and ...).
    const std::string key = at.value("key", std::string());
    if (key.empty() || key.find_first_not_of("0123456789-:, .None") != std::string::npos) {
      why = "indexing with " + (key.empty() ? std::string("a computed key") : key);
      return std::nullopt;
    }
    e = x + "[" + key + "]";
  } else if (n.op == "diagonal") {
    e = x + ".diagonal(" + at.value("offset", json(0)).dump() + ", " +
        at.value("dim1", json(0)).dump() + ", " + at.value("dim2", json(1)).dump() + ")";
  } else if (n.op == "expand" || n.op == "expand_as") {
    e = x + ".expand(" + host.shape(n.shape, n.altShape) + ")";
  } else if (n.op == "contiguous") {
    e = x;  // kernels address operands through their strides
  } else {  // reshape, flatten, unsqueeze, squeeze: the traced result's shape
    e = x + ".reshape(" + host.shape(n.shape, n.altShape) + ")";
  }
  return LoweredGroup{"",
                      std::string(kHost) + var(n.name) + " = " + e + "  # " + n.op + " (line " +
                          std::to_string(n.line) + ")\n",
                      "group " + std::to_string(index) + " view [" + n.op + "]: on the host"};
}

}  // namespace crucible::kernel_synth
