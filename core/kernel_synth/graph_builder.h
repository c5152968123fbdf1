#pragma once
// The graph a rewrite writes (graph_rewrite, rewrite_attention): the traced graph's inputs,
// parameters and outputs, and nodes appended in order, each value's shape, alternative-batch shape
// and dtype looked up among what is already written. Internal to core/kernel_synth.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel_synth/op_graph.h"

namespace crucible::kernel_synth {

class GraphBuilder {
 public:
  explicit GraphBuilder(const OpGraph& graph);

  Shape shapeOf(const std::string& name) const;
  std::optional<Shape> altOf(const std::string& name) const;
  std::string dtypeOf(const std::string& name) const;

  /// Appends a node derived from `from` (its dtype and line) and returns its name; throws
  /// GraphError when a value of that name is already written.
  std::string emit(const OpNode& from, const std::string& name, const std::string& op,
                   std::vector<Operand> inputs, nlohmann::json attrs, Shape shape,
                   std::optional<Shape> alt);
  /// A one-operand node on `x`'s shape.
  std::string pointwise(const OpNode& from, const std::string& name, const std::string& op,
                        const std::string& x, nlohmann::json attrs = nlohmann::json::object());
  /// A node on the shape of the first value among `inputs` (`dtype` when it differs).
  std::string op(const OpNode& from, const std::string& name, const std::string& what,
                 std::vector<Operand> inputs, nlohmann::json attrs = nlohmann::json::object(),
                 const std::string& dtype = "");

  static Operand ref(const std::string& name) { return Operand{name, {}}; }
  static Operand number(double v) { return Operand{{}, v}; }
  /// The node's first operand when it is a value; empty otherwise.
  static std::string inputRef(const OpNode& n);

 protected:
  OpGraph out_;
};

}  // namespace crucible::kernel_synth
