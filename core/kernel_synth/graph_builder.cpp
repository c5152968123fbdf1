#include "core/kernel_synth/graph_builder.h"

namespace crucible::kernel_synth {

using nlohmann::json;

GraphBuilder::GraphBuilder(const OpGraph& graph) : out_(graph) {
  out_.nodes.clear();
}

Shape GraphBuilder::shapeOf(const std::string& name) const {
  if (const auto* n = out_.node(name)) return n->shape;
  if (const auto* v = out_.value(name)) return v->shape;
  return {};
}

std::optional<Shape> GraphBuilder::altOf(const std::string& name) const {
  if (const auto* n = out_.node(name)) return n->altShape;
  if (const auto* v = out_.value(name)) return v->altShape;
  return std::nullopt;
}

std::string GraphBuilder::dtypeOf(const std::string& name) const {
  if (const auto* n = out_.node(name)) return n->dtype;
  if (const auto* v = out_.value(name)) return v->dtype;
  return {};
}

std::string GraphBuilder::emit(const OpNode& from, const std::string& name, const std::string& op,
                               std::vector<Operand> inputs, json attrs, Shape shape,
                               std::optional<Shape> alt) {
  // Values are looked up by name: a second node of one name would shadow the first's readers.
  if (out_.node(name) || out_.value(name)) {
    throw GraphError("a rewrite named two values " + name);
  }
  OpNode n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.shape = std::move(shape);
  n.altShape = std::move(alt);
  n.dtype = from.dtype;
  n.line = from.line;
  out_.nodes.push_back(std::move(n));
  return name;
}

std::string GraphBuilder::pointwise(const OpNode& from, const std::string& name,
                                    const std::string& op, const std::string& x, json attrs) {
  return emit(from, name, op, {ref(x)}, std::move(attrs), shapeOf(x), altOf(x));
}

std::string GraphBuilder::op(const OpNode& from, const std::string& name, const std::string& what,
                             std::vector<Operand> inputs, json attrs, const std::string& dtype) {
  std::string shaped;
  for (const auto& in : inputs) {
    if (in.isRef() && shaped.empty()) shaped = in.ref;
  }
  emit(from, name, what, std::move(inputs), std::move(attrs), shapeOf(shaped), altOf(shaped));
  if (!dtype.empty()) out_.nodes.back().dtype = dtype;
  return name;
}

std::string GraphBuilder::inputRef(const OpNode& n) {
  return !n.inputs.empty() && n.inputs[0].isRef() ? n.inputs[0].ref : std::string();
}

}  // namespace crucible::kernel_synth
