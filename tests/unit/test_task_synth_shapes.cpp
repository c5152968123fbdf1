// The Gecode shape model (core/task_synth/shape_model): every solution is checked against
// PyTorch's own shape semantics, recomputed here independently of the constraints; infeasible
// bounds fail fast with a clear error; one seed gives one solution; the writer's bytes follow.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include "core/task_synth/rng.h"
#include "core/task_synth/shape_model.h"
#include "core/task_synth/task_writer.h"

namespace crucible::task_synth {
namespace {

using Shape = std::vector<int>;

std::optional<Shape> broadcastShapes(const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      int& o = out[rank - s.size() + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o != 1) return std::nullopt;
      o = s[i];
    }
  }
  return out;
}

/// The position `dim` (negative, as emitted) refers to in a shape of `rank`.
std::size_t at(int dim, std::size_t rank) {
  return rank + dim;
}

/// What PyTorch computes for the node's output shape, given the solved inputs and arguments;
/// nullopt when PyTorch would reject them.
std::optional<Shape> expectedOutput(const OpSpec& op, const std::vector<Shape>& in,
                                    const std::map<std::string, int>& p) {
  const Shape& x = in[0];
  auto arg = [&](const char* name) { return p.at(name); };
  switch (op.rule) {
    case ShapeRule::Same:
    case ShapeRule::BatchNorm:
    case ShapeRule::InstanceNorm:
      return x;
    case ShapeRule::SameLastDim:
      if (x.back() < op.minExtent) return std::nullopt;
      return x;
    case ShapeRule::SameAlongDim:
      if (x[at(arg("dim"), x.size())] < op.minExtent) return std::nullopt;
      return x;
    case ShapeRule::GroupNorm:
      if (x[1] % arg("groups") != 0) return std::nullopt;
      return x;
    case ShapeRule::Broadcast:
      return broadcastShapes(in);
    case ShapeRule::Equal:
      for (const auto& s : in) {
        if (s != x) return std::nullopt;
      }
      return x;
    case ShapeRule::Reduce:
    case ShapeRule::BroadcastReduce: {
      auto joined = op.rule == ShapeRule::Reduce ? std::optional<Shape>(x) : broadcastShapes(in);
      if (!joined) return std::nullopt;
      Shape out = *joined;
      const std::size_t d = at(arg("dim"), out.size());
      if (d >= out.size() || out[d] < op.minExtent) return std::nullopt;
      if (p.count("keepdim") && arg("keepdim")) {
        out[d] = 1;
      } else {
        out.erase(out.begin() + static_cast<long>(d));
      }
      return out;
    }
    case ShapeRule::Matmul:
      if (x.size() != 2 || in[1].size() != 2 || x[1] != in[1][0]) return std::nullopt;
      return Shape{x[0], in[1][1]};
    case ShapeRule::Bmm:
      if (x.size() != 3 || in[1].size() != 3 || x[0] != in[1][0] || x[2] != in[1][1]) {
        return std::nullopt;
      }
      return Shape{x[0], x[1], in[1][2]};
    case ShapeRule::Linear: {
      if (x.back() != arg("in_features")) return std::nullopt;
      Shape out = x;
      out.back() = arg("out_features");
      return out;
    }
    case ShapeRule::Conv:
    case ShapeRule::Pool: {
      if (static_cast<int>(x.size()) != 2 + op.spatialDims) return std::nullopt;
      const int k = arg("kernel"), s = arg("stride"), pad = arg("pad");
      if (2 * pad > k) return std::nullopt;  // PyTorch's pooling rule
      Shape out = x;
      if (op.rule == ShapeRule::Conv) {
        if (x[1] != arg("in_channels")) return std::nullopt;
        out[1] = arg("out_channels");
      }
      for (std::size_t j = 2; j < x.size(); ++j) {
        if (x[j] + 2 * pad < k) return std::nullopt;
        out[j] = (x[j] + 2 * pad - k) / s + 1;
      }
      return out;
    }
    case ShapeRule::AdaptivePool:
      if (arg("height") > x[2] || arg("width") > x[3]) return std::nullopt;
      return Shape{x[0], x[1], arg("height"), arg("width")};
    case ShapeRule::Transpose: {
      Shape out = x;
      std::swap(out[at(arg("dim"), x.size())], out[at(arg("dim1"), x.size())]);
      return out;
    }
    case ShapeRule::Cat: {
      const Shape& y = in[1];
      if (y.size() != x.size()) return std::nullopt;
      const std::size_t d = at(arg("dim"), x.size());
      Shape out = x;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (i != d && x[i] != y[i]) return std::nullopt;
      }
      out[d] += y[d];
      return out;
    }
    case ShapeRule::Flatten: {
      Shape out(x.begin(), x.end() - 1);
      out.back() = x[x.size() - 2] * x.back();
      return out;
    }
  }
  return std::nullopt;
}

void expectSatisfied(const Program& p, const ShapeSolution& s, const ShapeBounds& b) {
  ASSERT_EQ(s.shapes.size(), p.tensors.size());
  std::int64_t bytes = 0;
  for (std::size_t t = 0; t < p.tensors.size(); ++t) {
    const auto& shape = s.shapes[t];
    EXPECT_GE(shape.size(), 1u);
    EXPECT_LE(shape.size(), static_cast<std::size_t>(kMaxRank));
    for (int d : shape) {
      EXPECT_GE(d, 1);
      EXPECT_LE(d, b.maxDim);
    }
    bytes += elementCount(shape) * (p.tensors[t].dtype == DtypeRule::Index ? 8 : 4);
  }
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const auto& node = p.nodes[n];
    std::vector<Shape> in;
    for (int t : node.inputs) {
      in.push_back(s.shapes[t]);
      EXPECT_GE(static_cast<int>(s.shapes[t].size()), node.op->minRank) << node.op->name;
      EXPECT_LE(static_cast<int>(s.shapes[t].size()), node.op->maxRank) << node.op->name;
    }
    const auto expected = expectedOutput(*node.op, in, s.params[n]);
    ASSERT_TRUE(expected.has_value()) << node.op->name << " rejects its solved inputs";
    EXPECT_EQ(*expected, s.shapes[node.output]) << node.op->name;
    if (node.op->rule == ShapeRule::BroadcastReduce) {
      bytes += 12 * elementCount(*broadcastShapes(in));  // the materialised products
    }
    const auto& pr = s.params[n];
    if (node.op->rule == ShapeRule::Linear) {
      bytes += 4LL * (pr.at("in_features") + 1) * pr.at("out_features");
    }
    if (node.op->rule == ShapeRule::Conv) {
      std::int64_t window =
          node.op->spatialDims == 1 ? pr.at("kernel") : pr.at("kernel") * pr.at("kernel");
      bytes += 4LL * pr.at("out_channels") * (pr.at("in_channels") * window + 1);
    }
  }
  EXPECT_EQ(bytes, s.bytes) << "every tensor and parameter counted";
  EXPECT_LE(s.bytes, b.maxBytes);
  EXPECT_GE(s.flops, b.minFlops);
  EXPECT_LE(s.flops, b.maxFlops);
  for (int t : p.outputs()) EXPECT_GE(elementCount(s.shapes[t]), b.minOutputElements);
}

TEST(TaskSynthShapes, SolutionsSatisfyPyTorchsShapeRulesAndTheBounds) {
  const ShapeBounds bounds;
  int solved = 0;
  for (int ops : {1, 2, 5, 12}) {
    for (std::uint64_t seed = 0; seed < 120; ++seed) {
      const Program p = sampleProgram(ops, deriveSeed(seed, ops));
      try {
        const ShapeSolution s = solveShapes(p, bounds, seed);
        expectSatisfied(p, s, bounds);
        ++solved;
      } catch (const ShapeError& e) {
        EXPECT_NE(e.kind(), ShapeError::Kind::Cancelled);
      }
    }
  }
  EXPECT_GE(solved, 440) << "most sampled programs are feasible";
}

TEST(TaskSynthShapes, TightBoundsAreRespected) {
  ShapeBounds small;
  small.maxDim = 40;
  small.maxFlops = 1 << 20;
  small.minFlops = 1 << 12;
  small.maxBytes = 1 << 18;
  small.minOutputElements = 4;
  int solved = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const Program p = sampleProgram(4, seed);
    try {
      expectSatisfied(p, solveShapes(p, small, seed), small);
      ++solved;
    } catch (const ShapeError&) {
    }
  }
  EXPECT_GE(solved, 70);
}

Program singleOp(const char* name, RankRange ranks) {
  Program p;
  const OpSpec* op = findOp(name);
  ComputeNode node{op, {}, op->arity};
  for (int i = 0; i < op->arity; ++i) {
    p.tensors.push_back({-1, ranks, DtypeRule::Float, 1});
    node.inputs.push_back(i);
  }
  p.tensors.push_back({0, outputRanks(*op, ranks), op->dtype, 0});
  p.nodes.push_back(node);
  return p;
}

TEST(TaskSynthShapes, InfeasibleBoundsGiveAClearErrorQuickly) {
  const auto start = std::chrono::steady_clock::now();
  ShapeBounds b;
  b.maxDim = 1;  // softmax needs a dim of at least 2
  b.minFlops = 0;
  b.minOutputElements = 1;
  try {
    solveShapes(singleOp("softmax", {1, 4}), b, 1);
    FAIL() << "solved an infeasible problem";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.kind(), ShapeError::Kind::Infeasible);
    EXPECT_NE(std::string(e.what()).find("infeasible"), std::string::npos);
  }
  ShapeBounds tiny;
  tiny.maxDim = 4;
  tiny.minFlops = 100000;  // a matmul of dims <= 4 does at most 128
  try {
    solveShapes(singleOp("matmul", {2, 2}), tiny, 1);
    FAIL() << "solved an infeasible problem";
  } catch (const ShapeError& e) {
    EXPECT_NE(e.kind(), ShapeError::Kind::Cancelled);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(TaskSynthShapes, BadBoundsAreRejectedByName) {
  ShapeBounds b;
  b.minFlops = b.maxFlops + 1;
  try {
    b.validate();
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("min-flops"), std::string::npos);
  }
  b = ShapeBounds{};
  b.maxFlops = 1LL << 40;  // beyond Gecode's integers
  EXPECT_THROW(b.validate(), std::invalid_argument);
}

TEST(TaskSynthShapes, CancellationStopsTheSearch) {
  std::stop_source stop;
  stop.request_stop();
  ShapeBounds b;
  b.failLimit = 1ULL << 40;
  const Program p = sampleProgram(12, 5);
  try {
    solveShapes(p, b, 1, stop.get_token());
    FAIL() << "a stopped search returned a solution";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.kind(), ShapeError::Kind::Cancelled);
  }
}

TEST(TaskSynthShapes, OneSeedGivesOneTaskAndSeedsDiffer) {
  const ShapeBounds b;
  std::set<std::string> sources;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const Program p = sampleProgram(4, 1234);
    try {
      const auto text = writeTask(p, solveShapes(p, b, seed), "test").source;
      const Program again = sampleProgram(4, 1234);
      EXPECT_EQ(text, writeTask(again, solveShapes(again, b, seed), "test").source);
      sources.insert(text);
    } catch (const ShapeError&) {
    }
  }
  EXPECT_GE(sources.size(), 8u) << "other solver seeds pick other shapes";
}

TEST(TaskSynthWriter, WritesAKernelBenchReference) {
  const Program p = singleOp("linear", {2, 2});
  ShapeBounds b;
  const auto s = solveShapes(p, b, 3);
  const TaskText t = writeTask(p, s, "seed 0, candidate 0");
  EXPECT_EQ(t.name, "Linear");
  EXPECT_EQ(t.ops, std::vector<std::string>{"linear"});
  for (const char* needed : {"class Model(nn.Module):", "def __init__(self):",
                             "def forward(self, x0):", "t1 = self.linear_1(x0)", "return t1",
                             "def get_inputs():", "def get_init_inputs():", "x0_shape = (",
                             "linear_1_in_features = ", "nn.Linear(linear_1_in_features"}) {
    EXPECT_NE(t.source.find(needed), std::string::npos) << needed;
  }
  EXPECT_EQ(camelName("max_pool2d"), "MaxPool2d");
}

}  // namespace
}  // namespace crucible::task_synth
