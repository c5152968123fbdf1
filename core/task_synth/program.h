#pragma once
// A synthetic program before it has shapes: a DAG whose creation nodes make input tensors
// (torch.randn) and whose compute nodes apply catalogue operators to tensors already in it.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/task_synth/op_catalogue.h"

namespace crucible::task_synth {

struct TensorNode {
  int producer = -1;  // the compute node that makes it; -1 for an input (a creation node)
  RankRange ranks;    // the ranks it may have (what sampling knows; the solver picks one)
  DtypeRule dtype = DtypeRule::Float;
  int consumers = 0;
};

struct ComputeNode {
  const OpSpec* op = nullptr;
  std::vector<int> inputs;  // tensor indices, in argument order
  int output = -1;
};

struct Program {
  std::vector<TensorNode> tensors;
  std::vector<ComputeNode> nodes;

  std::vector<int> inputs() const;   // creation nodes' tensors, in creation order
  std::vector<int> outputs() const;  // compute results nothing consumes, in order
};

void to_json(nlohmann::json& j, const Program& p);

/// Samples a program of `computeNodes` operators (DRTriton's loop): each operator is drawn
/// uniformly from the catalogue; each of its inputs is drawn uniformly from the unconsumed
/// tensors whose possible ranks fit it, and an input tensor is created when none fits. Every
/// tensor is consumed at most once, so the program's outputs are the tensors left unconsumed.
Program sampleProgram(int computeNodes, std::uint64_t seed);

}  // namespace crucible::task_synth
