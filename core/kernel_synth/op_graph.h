#pragma once
// The traced op graph of a reference (the worker's `trace` stage, docs/WORKER_PROTOCOL.md): graph
// inputs, parameters and buffers by attribute path, nodes with canonical op names, outputs.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace crucible::kernel_synth {

using Shape = std::vector<std::int64_t>;

/// A node's operand: a graph value by name, a number, or absent (an optional tensor left out).
struct Operand {
  std::string ref;               // non-empty: a value (input, parameter path or node)
  std::optional<double> number;  // a constant in a tensor's place
  bool isRef() const { return !ref.empty(); }
  bool isNone() const { return ref.empty() && !number; }
};

struct OpNode {
  std::string name;
  std::string op;  // canonical: relu, add, linear, softmax, layer_norm, ... (trace_stage.py)
  std::vector<Operand> inputs;
  nlohmann::json attrs = nlohmann::json::object();
  Shape shape;
  std::optional<Shape> altShape;  // on the alternative batch size, when traced
  std::string dtype;              // empty for values that are not tensors
  int line = 0;
};

struct GraphValue {
  std::string name;
  Shape shape;
  std::optional<Shape> altShape;
  std::string dtype;
  bool parameter = false;  // a parameter or buffer of the model (name = attribute path)
};

struct OpGraph {
  std::vector<GraphValue> inputs;  // forward's arguments, in order
  std::vector<GraphValue> params;
  std::vector<OpNode> nodes;  // topological order
  std::vector<std::string> outputs;
  std::optional<std::int64_t> batch;  // the reference's batch constant, when it has one
  std::string tracer;                 // fx | export

  /// The shape, dtype and kind of a value by name; nullptr when unknown.
  const GraphValue* value(const std::string& name) const;
  const OpNode* node(const std::string& name) const;
  int nodeIndex(const std::string& name) const;  // -1 for inputs and parameters
};

class GraphError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reads the trace stage's `graph` object; throws GraphError when it is malformed.
OpGraph parseGraph(const nlohmann::json& graph);

}  // namespace crucible::kernel_synth
