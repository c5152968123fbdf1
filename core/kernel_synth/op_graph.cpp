#include "core/kernel_synth/op_graph.h"

#include <cmath>

namespace crucible::kernel_synth {

using nlohmann::json;

namespace {

Shape shapeOf(const json& j) {
  Shape s;
  if (!j.is_array()) return s;
  for (const auto& d : j) {
    if (!d.is_number_integer()) throw GraphError("a shape holds a non-integer dimension");
    s.push_back(d.get<std::int64_t>());
  }
  return s;
}

std::optional<Shape> altShapeOf(const json& graph, const std::string& name) {
  if (!graph.contains("alt_shapes") || !graph["alt_shapes"].is_object()) return std::nullopt;
  const auto& alt = graph["alt_shapes"];
  if (!alt.contains(name)) return std::nullopt;
  return shapeOf(alt[name]);
}

Operand operandOf(const json& j) {
  Operand o;
  // JSON has no infinities: the trace stage writes them (a mask's -inf fill) as text, which no
  // value name can be.
  if (j == json("inf") || j == json("-inf") || j == json("nan")) {
    o.number = j == json("nan") ? std::nan("") : j == json("inf") ? HUGE_VAL : -HUGE_VAL;
  } else if (j.is_string()) {
    o.ref = j.get<std::string>();
  } else if (j.is_number()) {
    o.number = j.get<double>();
  } else if (j.is_boolean()) {
    o.number = j.get<bool>() ? 1.0 : 0.0;
  } else if (!j.is_null()) {
    throw GraphError("an operand is neither a value name, a number nor null");
  }
  return o;
}

GraphValue valueOf(const json& j, const json& graph, bool parameter) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
    throw GraphError("a graph input or parameter has no name");
  }
  GraphValue v;
  v.name = j["name"].get<std::string>();
  v.shape = shapeOf(j.value("shape", json()));
  v.dtype = j.value("dtype", json()).is_string() ? j["dtype"].get<std::string>() : "";
  v.parameter = parameter;
  if (!parameter) v.altShape = altShapeOf(graph, v.name);
  return v;
}

}  // namespace

const GraphValue* OpGraph::value(const std::string& name) const {
  for (const auto& v : inputs) {
    if (v.name == name) return &v;
  }
  for (const auto& v : params) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

const OpNode* OpGraph::node(const std::string& name) const {
  const int i = nodeIndex(name);
  return i < 0 ? nullptr : &nodes[i];
}

int OpGraph::nodeIndex(const std::string& name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

OpGraph parseGraph(const json& graph) {
  if (!graph.is_object()) throw GraphError("the graph is not a JSON object");
  for (const char* key : {"inputs", "params", "nodes", "outputs"}) {
    if (!graph.contains(key) || !graph[key].is_array()) {
      throw GraphError(std::string("the graph has no '") + key + "' list");
    }
  }
  OpGraph g;
  g.tracer = graph.value("tracer", json()).is_string() ? graph["tracer"].get<std::string>() : "";
  for (const auto& j : graph["inputs"]) g.inputs.push_back(valueOf(j, graph, false));
  for (const auto& j : graph["params"]) g.params.push_back(valueOf(j, graph, true));
  for (const auto& j : graph["nodes"]) {
    if (!j.is_object() || !j.contains("name") || !j.contains("op")) {
      throw GraphError("a node has no name or op");
    }
    OpNode n;
    n.name = j["name"].get<std::string>();
    n.op = j["op"].get<std::string>();
    for (const auto& in : j.value("inputs", json::array())) n.inputs.push_back(operandOf(in));
    n.attrs = j.value("attrs", json::object());
    n.shape = shapeOf(j.value("shape", json()));
    n.altShape = altShapeOf(graph, n.name);
    n.dtype = j.value("dtype", json()).is_string() ? j["dtype"].get<std::string>() : "";
    n.line = j.value("line", json()).is_number_integer() ? j["line"].get<int>() : 0;
    g.nodes.push_back(std::move(n));
  }
  for (const auto& o : graph["outputs"]) {
    if (!o.is_string()) throw GraphError("a graph output is not a value name");
    g.outputs.push_back(o.get<std::string>());
  }
  const json& batch = graph.value("batch", json());
  if (batch.is_object() && batch.contains("value") && batch["value"].is_number_integer()) {
    g.batch = batch["value"].get<std::int64_t>();
  }
  return g;
}

}  // namespace crucible::kernel_synth
