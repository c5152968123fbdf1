#include "core/task_synth/program.h"

#include <stdexcept>

#include "core/task_synth/rng.h"

namespace crucible::task_synth {

std::vector<int> Program::inputs() const {
  std::vector<int> result;
  for (int t = 0; t < static_cast<int>(tensors.size()); ++t) {
    if (tensors[t].producer < 0) result.push_back(t);
  }
  return result;
}

std::vector<int> Program::outputs() const {
  std::vector<int> result;
  for (int t = 0; t < static_cast<int>(tensors.size()); ++t) {
    if (tensors[t].producer >= 0 && tensors[t].consumers == 0) result.push_back(t);
  }
  return result;
}

void to_json(nlohmann::json& j, const Program& p) {
  j = nlohmann::json::array();
  for (const auto& node : p.nodes) {
    j.push_back({{"op", node.op->name}, {"inputs", node.inputs}, {"output", node.output}});
  }
}

namespace {

/// Rules whose inputs must all have one rank.
bool sameRankInputs(ShapeRule rule) {
  return rule == ShapeRule::Equal || rule == ShapeRule::Cat || rule == ShapeRule::Matmul ||
         rule == ShapeRule::Bmm;
}

bool broadcasts(ShapeRule rule) {
  return rule == ShapeRule::Broadcast || rule == ShapeRule::BroadcastReduce;
}

}  // namespace

Program sampleProgram(int computeNodes, std::uint64_t seed) {
  if (computeNodes < 1) throw std::invalid_argument("a program needs at least one compute node");
  SplitMix64 rng(seed);
  const auto ops = catalogue();
  Program p;
  for (int n = 0; n < computeNodes; ++n) {
    const OpSpec& op = ops[rng.below(ops.size())];
    RankRange required{op.minRank, op.maxRank};
    RankRange combined{0, 0};  // broadcasting: the hull of the inputs' ranks
    ComputeNode node;
    node.op = &op;
    for (int a = 0; a < op.arity; ++a) {
      std::vector<int> fits;
      for (int t = 0; t < static_cast<int>(p.tensors.size()); ++t) {
        const auto& tensor = p.tensors[t];
        if (tensor.consumers == 0 && tensor.dtype == DtypeRule::Float &&
            !tensor.ranks.intersect(required).empty()) {
          fits.push_back(t);
        }
      }
      int chosen;
      if (fits.empty()) {
        chosen = static_cast<int>(p.tensors.size());
        p.tensors.push_back(TensorNode{-1, required, DtypeRule::Float, 0});
      } else {
        chosen = fits[rng.below(fits.size())];
      }
      auto& tensor = p.tensors[chosen];
      tensor.consumers++;
      const RankRange fit = tensor.ranks.intersect(required);
      if (sameRankInputs(op.rule)) required = fit;
      combined = a == 0 ? fit
                        : (broadcasts(op.rule) ? RankRange{std::max(combined.lo, fit.lo),
                                                           std::max(combined.hi, fit.hi)}
                                               : combined.intersect(fit));
      node.inputs.push_back(chosen);
    }
    node.output = static_cast<int>(p.tensors.size());
    p.tensors.push_back(
        TensorNode{static_cast<int>(p.nodes.size()), outputRanks(op, combined), op.dtype, 0});
    p.nodes.push_back(std::move(node));
  }
  return p;
}

}  // namespace crucible::task_synth
