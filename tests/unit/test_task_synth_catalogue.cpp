// The task synthesizer's operator catalogue and program sampler (core/task_synth).

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "core/task_synth/op_catalogue.h"
#include "core/task_synth/program.h"

namespace crucible::task_synth {
namespace {

TEST(TaskSynthCatalogue, HasAtLeastFiftyDistinctOperatorsOfEveryKind) {
  const auto ops = catalogue();
  EXPECT_GE(ops.size(), 50u);
  std::set<std::string> names;
  std::set<ShapeRule> rules;
  for (const auto& op : ops) {
    EXPECT_TRUE(names.insert(std::string(op.name)).second) << op.name << " twice";
    rules.insert(op.rule);
    EXPECT_EQ(findOp(op.name), &op);
  }
  for (const char* needed :
       {"relu", "add", "sum", "softmax", "log_softmax", "layer_norm", "matmul", "bmm", "linear",
        "conv1d", "conv2d", "max_pool2d", "cat", "transpose", "flatten", "mse_loss", "argmax"}) {
    EXPECT_TRUE(names.count(needed)) << needed;
  }
  EXPECT_EQ(rules.size(), 19u) << "every shape rule has at least one operator";
  EXPECT_EQ(findOp("no_such_op"), nullptr);
}

TEST(TaskSynthCatalogue, TemplatesUseExactlyTheirInputsAndTheirRulesArguments) {
  const std::regex placeholder("\\{([a-z0-9_]+)\\}");
  for (const auto& op : catalogue()) {
    const std::string call(op.call);
    std::set<std::string> used;
    for (std::sregex_iterator it(call.begin(), call.end(), placeholder), end; it != end; ++it) {
      used.insert((*it)[1]);
    }
    for (int i = 0; i < op.arity; ++i) EXPECT_TRUE(used.count(std::to_string(i))) << op.name;
    EXPECT_FALSE(used.count(std::to_string(op.arity))) << op.name << " uses a missing input";
    EXPECT_EQ(used.count("dim") == 1, hasDimArgument(op.rule) && op.rule != ShapeRule::SameLastDim)
        << op.name;
    EXPECT_EQ(used.count("module") == 1, hasModule(op.rule)) << op.name;
    EXPECT_EQ(used.count("keepdim") == 1, op.rule == ShapeRule::Reduce) << op.name;
    EXPECT_LE(op.minRank, op.maxRank) << op.name;
    EXPECT_GE(op.minRank, 1);
    EXPECT_LE(op.maxRank, kMaxRank);
    if (op.rule == ShapeRule::Conv || op.rule == ShapeRule::Pool) {
      EXPECT_EQ(op.minRank, 2 + op.spatialDims) << op.name;
    }
  }
}

TEST(TaskSynthCatalogue, OutputRanksFollowTheRules) {
  EXPECT_EQ(outputRanks(*findOp("relu"), {2, 3}).lo, 2);
  EXPECT_EQ(outputRanks(*findOp("relu"), {2, 3}).hi, 3);
  const RankRange reduced = outputRanks(*findOp("sum"), {1, 4});
  EXPECT_EQ(reduced.lo, 1);  // keepdim on a vector keeps rank 1
  EXPECT_EQ(reduced.hi, 4);
  EXPECT_EQ(outputRanks(*findOp("flatten"), {2, 4}).hi, 3);
  EXPECT_EQ(outputRanks(*findOp("matmul"), {1, 4}).lo, 2);
  EXPECT_EQ(outputRanks(*findOp("bmm"), {1, 4}).hi, 3);
  EXPECT_TRUE(outputRanks(*findOp("conv2d"), {1, 3}).empty());
  EXPECT_TRUE(outputRanks(*findOp("tril"), {1, 1}).empty());
}

TEST(TaskSynthProgram, SamplesADagThatConsumesEachTensorOnceWithFittingRanks) {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const Program p = sampleProgram(8, seed);
    ASSERT_EQ(p.nodes.size(), 8u);
    std::vector<int> uses(p.tensors.size(), 0);
    for (std::size_t n = 0; n < p.nodes.size(); ++n) {
      const auto& node = p.nodes[n];
      EXPECT_EQ(static_cast<int>(node.inputs.size()), node.op->arity);
      EXPECT_EQ(p.tensors[node.output].producer, static_cast<int>(n));
      for (int t : node.inputs) {
        EXPECT_LT(t, node.output) << "inputs exist before their consumer";
        EXPECT_EQ(p.tensors[t].dtype, DtypeRule::Float);
        EXPECT_FALSE(p.tensors[t].ranks.intersect({node.op->minRank, node.op->maxRank}).empty());
        ++uses[t];
      }
    }
    for (std::size_t t = 0; t < p.tensors.size(); ++t) {
      EXPECT_LE(uses[t], 1);
      EXPECT_EQ(uses[t], p.tensors[t].consumers);
      if (p.tensors[t].producer < 0) {
        EXPECT_EQ(uses[t], 1) << "an input nothing reads";
      }
    }
    EXPECT_FALSE(p.outputs().empty());
  }
}

TEST(TaskSynthProgram, OneSeedGivesOneProgramAndSeedsDiffer) {
  const auto ops = [](const Program& p) {
    std::string s;
    for (const auto& n : p.nodes) s += std::string(n.op->name) + ",";
    return s;
  };
  EXPECT_EQ(ops(sampleProgram(6, 99)), ops(sampleProgram(6, 99)));
  std::set<std::string> distinct;
  for (std::uint64_t seed = 0; seed < 20; ++seed) distinct.insert(ops(sampleProgram(6, seed)));
  EXPECT_GE(distinct.size(), 19u);
  EXPECT_THROW(sampleProgram(0, 1), std::invalid_argument);
}

TEST(TaskSynthProgram, OperatorsAreDrawnUniformly) {
  // 83 operators, 40,000 draws: each expected ~480 times; a skew would show far outside.
  std::map<std::string, int> counts;
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    for (const auto& n : sampleProgram(20, seed).nodes) counts[std::string(n.op->name)]++;
  }
  const double expected = 40000.0 / static_cast<double>(catalogue().size());
  ASSERT_EQ(counts.size(), catalogue().size());
  for (const auto& [name, n] : counts) {
    EXPECT_GT(n, expected * 0.75) << name;
    EXPECT_LT(n, expected * 1.25) << name;
  }
}

}  // namespace
}  // namespace crucible::task_synth
