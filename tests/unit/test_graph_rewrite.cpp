// The graph rewrites before partitioning: losses split into their per-element form and a
// reduction, norms into sums and roots, long reductions nested, on hand-written op graphs.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/kernel_synth/graph_rewrite.h"
#include "core/kernel_synth/partition.h"

namespace crucible::kernel_synth {
namespace {

using nlohmann::json;

json node(const std::string& name, const std::string& op, json inputs, json shape,
          json attrs = json::object()) {
  return {{"name", name},   {"op", op},           {"inputs", inputs}, {"attrs", attrs},
          {"shape", shape}, {"dtype", "float32"}, {"line", 7}};
}

json graphOf(json inputShape, json nodes, const std::string& output, json alt = json()) {
  json g = {{"inputs",
             {{{"name", "x"}, {"shape", inputShape}, {"dtype", "float32"}},
              {{"name", "t"}, {"shape", inputShape}, {"dtype", "float32"}}}},
            {"params", json::array()},
            {"nodes", std::move(nodes)},
            {"outputs", {output}}};
  if (!alt.is_null()) g["alt_shapes"] = std::move(alt);
  return g;
}

std::vector<std::string> opsOf(const OpGraph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  return ops;
}

TEST(GraphRewrite, AShortReductionStaysOneNodeWithItsDimsSpelledOut) {
  const OpGraph g = rewriteForLowering(parseGraph(
      graphOf({8, 100}, {node("s", "sum", {"x"}, json::array(), {{"dim", nullptr}})}, "s")));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attrs["dim"], json({0, 1}));
  const Partition p = partition(g);
  EXPECT_TRUE(p.unsupported.empty()) << p.unsupported.front();
  EXPECT_EQ(p.groups.at(0).reduce.dims, (std::vector<int>{0, 1}));
}

TEST(GraphRewrite, ALongReductionNestsIntoStagesThatEachFitARow) {
  // 64 x 512 x 300 positions per output: the last dim and part of the rest fit a row.
  const OpGraph g = rewriteForLowering(parseGraph(
      graphOf({4, 64, 512, 300},
              {node("m", "mean", {"x"}, {4, 1, 1, 1}, {{"dim", {1, 2, 3}}, {"keepdim", true}})},
              "m", {{"x", {5, 64, 512, 300}}, {"m", {5, 1, 1, 1}}})));
  ASSERT_EQ(opsOf(g), (std::vector<std::string>{"mean", "mean", "mean"}));
  EXPECT_EQ(g.nodes[0].attrs["dim"], json({3}));
  EXPECT_EQ(g.nodes[0].shape, (Shape{4, 64, 512, 1}));
  EXPECT_EQ(g.nodes[1].attrs["dim"], json({2}));
  EXPECT_EQ(g.nodes[2].name, "m");
  EXPECT_EQ(g.nodes[2].attrs["dim"], json({1, 2, 3}));
  EXPECT_EQ(g.nodes[2].shape, (Shape{4, 1, 1, 1}));
  EXPECT_EQ(*g.nodes[2].altShape, (Shape{5, 1, 1, 1}));
  const Partition p = partition(g);
  EXPECT_TRUE(p.unsupported.empty());
  EXPECT_EQ(p.groups.size(), 3u);
}

TEST(GraphRewrite, ADimLongerThanARowIsCutByAViewAndTheKeptShapeRestored) {
  const OpGraph g = rewriteForLowering(parseGraph(graphOf(
      {2, 1048576}, {node("a", "amax", {"x"}, {2, 1}, {{"dim", 1}, {"keepdim", true}})}, "a")));
  ASSERT_EQ(opsOf(g), (std::vector<std::string>{"reshape", "amax", "amax", "reshape"}));
  EXPECT_EQ(g.nodes[0].shape, (Shape{2, 64, 16384}));
  EXPECT_EQ(g.nodes[1].attrs["dim"], json({2}));
  EXPECT_EQ(g.nodes[2].attrs["dim"], json({1, 2}));
  EXPECT_EQ(g.nodes[2].shape, (Shape{2}));
  EXPECT_EQ(g.nodes[3].name, "a");
  EXPECT_EQ(g.nodes[3].shape, (Shape{2, 1}));
}

TEST(GraphRewrite, ALongPrimeDimIsNotCutAndStaysAsTraced) {
  const OpGraph g = rewriteForLowering(
      parseGraph(graphOf({2, 1000003}, {node("s", "sum", {"x"}, {2}, {{"dim", 1}})}, "s")));
  ASSERT_EQ(opsOf(g), std::vector<std::string>{"sum"});
  EXPECT_EQ(g.nodes[0].attrs["dim"], json(1));
}

TEST(GraphRewrite, ALossWithAReductionIsItsPerElementLossAndAMean) {
  const OpGraph g = rewriteForLowering(parseGraph(graphOf(
      {16, 40}, {node("l", "huber_loss", {"x", "t"}, json::array(), {{"delta", 0.5}})}, "l")));
  ASSERT_EQ(opsOf(g), (std::vector<std::string>{"huber_loss", "mean"}));
  EXPECT_EQ(g.nodes[0].attrs["reduction"], "none");
  EXPECT_EQ(g.nodes[0].shape, (Shape{16, 40}));
  EXPECT_EQ(g.nodes[1].name, "l");
  EXPECT_TRUE(g.nodes[1].shape.empty());
  const Partition p = partition(g);
  ASSERT_TRUE(p.unsupported.empty()) << p.unsupported.front();
  EXPECT_EQ(p.groups.size(), 1u);  // the loss fuses into the reduction's row program
}

TEST(GraphRewrite, KlDivergencesBatchMeanIsAMeanTimesTheElementsPerSample) {
  const OpGraph g = rewriteForLowering(parseGraph(graphOf(
      {16, 40}, {node("k", "kl_div", {"x", "t"}, json::array(), {{"reduction", "batchmean"}})},
      "k")));
  ASSERT_EQ(opsOf(g), (std::vector<std::string>{"kl_div", "mean", "mul"}));
  EXPECT_EQ(g.nodes[2].inputs[1].number, 40.0);
}

TEST(GraphRewrite, NormsBecomeTheirSumsAndRoots) {
  const OpGraph fro = rewriteForLowering(
      parseGraph(graphOf({8, 30}, {node("n", "norm", {"x"}, json::array(), {{"p", "fro"}})}, "n")));
  EXPECT_EQ(opsOf(fro), (std::vector<std::string>{"square", "sum", "sqrt"}));
  const OpGraph l3 = rewriteForLowering(parseGraph(graphOf(
      {8, 30},
      {node("n", "linalg_vector_norm", {"x"}, {8}, {{"ord", 3}, {"dim", 1}, {"keepdim", false}})},
      "n")));
  EXPECT_EQ(opsOf(l3), (std::vector<std::string>{"abs", "pow", "sum", "pow"}));
  EXPECT_DOUBLE_EQ(l3.nodes[3].attrs["exponent"].get<double>(), 1.0 / 3.0);
  const OpGraph unit = rewriteForLowering(parseGraph(
      graphOf({8, 30}, {node("u", "normalize", {"x"}, {8, 30}, {{"p", 2.0}, {"dim", 1}})}, "u")));
  EXPECT_EQ(opsOf(unit), (std::vector<std::string>{"square", "sum", "sqrt", "clamp", "div"}));
  EXPECT_EQ(unit.nodes[1].shape, (Shape{8, 1}));
  EXPECT_TRUE(partition(unit).unsupported.empty());
}

TEST(GraphRewrite, AMatrixNormIsLeftForTheLowererToName) {
  const OpGraph g = rewriteForLowering(
      parseGraph(graphOf({8, 30}, {node("n", "norm", {"x"}, json::array(), {{"p", "nuc"}})}, "n")));
  ASSERT_EQ(opsOf(g), std::vector<std::string>{"norm"});
  EXPECT_EQ(partition(g).unsupported, std::vector<std::string>{"line 7: norm"});
}

TEST(GraphRewrite, StackIsViewsWithTheNewDimAndACatOfThem) {
  const OpGraph g = rewriteForLowering(parseGraph(
      graphOf({8, 30}, {node("s", "stack", {"x", "t"}, {8, 2, 30}, {{"dim", 1}})}, "s")));
  ASSERT_EQ(opsOf(g), (std::vector<std::string>{"unsqueeze", "unsqueeze", "cat"}));
  EXPECT_EQ(g.nodes[0].shape, (Shape{8, 1, 30}));
  EXPECT_EQ(g.nodes[2].inputs[1].ref, g.nodes[1].name);
  EXPECT_TRUE(partition(g).unsupported.empty());
}

TEST(GraphRewrite, ACatAlongTheBatchIsNamedAndOneElsewhereStartsAGroup) {
  const json alt = {{"x", {9, 30}}, {"t", {9, 30}}, {"c", {18, 30}}, {"r", {18, 30}}};
  const OpGraph alongBatch = parseGraph(
      graphOf({8, 30}, {node("c", "cat", {"x", "t"}, {16, 30}, {{"dim", 0}})}, "c", alt));
  EXPECT_EQ(partition(alongBatch).unsupported,
            std::vector<std::string>{"line 7: cat along the batch's dimension"});
  const OpGraph alongFeatures = parseGraph(graphOf(
      {8, 30},
      {node("e", "exp", {"x"}, {8, 30}), node("c", "cat", {"e", "t"}, {8, 60}, {{"dim", 1}}),
       node("r", "relu", {"c"}, {8, 60})},
      "r"));
  const Partition p = partition(alongFeatures);
  ASSERT_TRUE(p.unsupported.empty());
  ASSERT_EQ(p.groups.size(), 2u);  // exp stored for the cat to read; relu fused after it
  EXPECT_EQ(p.groups[1].nodes, (std::vector<int>{1, 2}));
}

TEST(GraphRewrite, CausalAttentionIsTwoProductsAroundAMaskedSoftmax) {
  json g = graphOf({2, 3, 10, 16},
                   {node("a", "scaled_dot_product_attention", {"x", "t", "t"}, {2, 3, 10, 16},
                         {{"is_causal", true}, {"dropout_p", 0.0}})},
                   "a");
  const OpGraph out = rewriteForLowering(parseGraph(g));
  ASSERT_EQ(opsOf(out),
            (std::vector<std::string>{"transpose", "matmul", "mul", "tril", "softmax", "matmul"}));
  EXPECT_DOUBLE_EQ(*out.nodes[2].inputs[1].number, 0.25);  // 1 / sqrt(16)
  EXPECT_EQ(out.nodes[1].shape, (Shape{2, 3, 10, 10}));
  EXPECT_TRUE(std::isinf(out.nodes[3].attrs["fill"].get<double>()));
  EXPECT_TRUE(partition(out).unsupported.empty());
  g["nodes"][0]["attrs"]["dropout_p"] = 0.1;  // random: left for the lowerer to name
  EXPECT_EQ(opsOf(rewriteForLowering(parseGraph(g))),
            std::vector<std::string>{"scaled_dot_product_attention"});
}

TEST(GraphRewrite, MarginLossesAreWrittenInPointwiseOpsNormsAndAMean) {
  json g = graphOf({6, 32},
                   {node("l", "triplet_margin_loss", {"x", "t", "x"}, json::array(),
                         {{"margin", 0.5}, {"p", 2.0}, {"eps", 1e-6}, {"swap", false}})},
                   "l");
  const OpGraph triplet = rewriteForLowering(parseGraph(g));
  EXPECT_EQ(opsOf(triplet).back(), "mean");
  EXPECT_EQ(triplet.nodes[triplet.nodes.size() - 2].op, "clamp");
  EXPECT_EQ(triplet.nodes[triplet.nodes.size() - 2].shape, (Shape{6}));
  EXPECT_TRUE(partition(triplet).unsupported.empty());
  g["nodes"][0]["attrs"]["swap"] = true;
  EXPECT_EQ(opsOf(rewriteForLowering(parseGraph(g))),
            std::vector<std::string>{"triplet_margin_loss"});

  const OpGraph hinge = rewriteForLowering(parseGraph(graphOf(
      {6, 32}, {node("h", "hinge_embedding_loss", {"x", "t"}, {6, 32}, {{"reduction", "none"}})},
      "h")));
  EXPECT_EQ(hinge.nodes.back().name, "h");
  EXPECT_EQ(hinge.nodes.back().shape, (Shape{6, 32}));
  EXPECT_TRUE(partition(hinge).unsupported.empty());
}

TEST(GraphRewrite, MultiHeadAttentionIsProjectionsHeadsAttentionAndTheOutputProjection) {
  json g = graphOf(
      {12, 4, 32},  // sequence first: (L, N, E)
      {node("m", "multi_head_attention", {"x", "x", "x", nullptr, "w_in", "b_in", "w_out", "b_out"},
            {12, 4, 32}, {{"num_heads", 8}, {"batch_first", false}})},
      "m", {{"x", {12, 5, 32}}, {"m", {12, 5, 32}}});
  g["params"] = {{{"name", "w_in"}, {"shape", {96, 32}}, {"dtype", "float32"}},
                 {{"name", "b_in"}, {"shape", {96}}, {"dtype", "float32"}},
                 {{"name", "w_out"}, {"shape", {32, 32}}, {"dtype", "float32"}},
                 {{"name", "b_out"}, {"shape", {32}}, {"dtype", "float32"}}};
  const OpGraph out = rewriteForLowering(parseGraph(g));
  const OpNode* heads = out.node("m__q_heads");
  ASSERT_NE(heads, nullptr);
  EXPECT_EQ(heads->shape, (Shape{4, 8, 12, 4}));
  EXPECT_EQ(*heads->altShape, (Shape{5, 8, 12, 4}));
  EXPECT_EQ(out.node("m__wk")->attrs["key"], "32:64");
  EXPECT_DOUBLE_EQ(*out.node("m__scaled")->inputs[1].number, 0.5);  // 1 / sqrt(32 / 8)
  EXPECT_EQ(out.nodes.back().op, "linear");
  EXPECT_EQ(out.nodes.back().inputs[1].ref, "w_out");
  EXPECT_TRUE(partition(out).unsupported.empty()) << partition(out).unsupported.front();
}

TEST(GraphRewrite, StdIsTheRootOfVarAndRmsNormItsMeanOfSquares) {
  const OpGraph sd = rewriteForLowering(parseGraph(
      graphOf({8, 30}, {node("s", "std", {"x"}, {8}, {{"dim", 1}, {"unbiased", true}})}, "s")));
  EXPECT_EQ(opsOf(sd), (std::vector<std::string>{"var", "sqrt"}));
  const OpGraph rms = rewriteForLowering(parseGraph(graphOf(
      {8, 30},
      {node("r", "rms_norm", {"x", "t"}, {8, 30}, {{"normalized_shape", {30}}, {"eps", 1e-6}})},
      "r")));
  EXPECT_EQ(opsOf(rms), (std::vector<std::string>{"square", "mean", "add", "rsqrt", "mul", "mul"}));
  EXPECT_EQ(rms.nodes[1].attrs["dim"], json({1}));
  EXPECT_TRUE(partition(rms).unsupported.empty());
}

TEST(GraphRewrite, InfinitiesWrittenAsTextAreNumbers) {
  const OpGraph g =
      parseGraph(graphOf({4, 4}, {node("m", "masked_fill", {"x", "t", "-inf"}, {4, 4})}, "m"));
  ASSERT_TRUE(g.nodes[0].inputs[2].number);
  EXPECT_TRUE(std::isinf(*g.nodes[0].inputs[2].number) && *g.nodes[0].inputs[2].number < 0);
}

}  // namespace
}  // namespace crucible::kernel_synth
