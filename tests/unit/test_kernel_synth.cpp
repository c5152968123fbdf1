// The synthesizer's partitioning and code generation on hand-written op graphs (the JSON the
// worker's trace stage emits), without running Python.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/kernel_synth/conv_spec.h"
#include "core/kernel_synth/launch_reuse.h"
#include "core/kernel_synth/lowering_support.h"
#include "core/kernel_synth/op_graph.h"
#include "core/kernel_synth/partition.h"
#include "core/kernel_synth/pointwise_expr.h"
#include "core/kernel_synth/synthesizer.h"

namespace crucible::kernel_synth {
namespace {

using nlohmann::json;

json node(const std::string& name, const std::string& op, json inputs, json shape,
          json attrs = json::object(), int line = 10) {
  return {{"name", name},   {"op", op},           {"inputs", inputs}, {"attrs", attrs},
          {"shape", shape}, {"dtype", "float32"}, {"line", line}};
}

/// y = relu(linear(x) + extra_bias), batch 8 (9 on the alternative batch).
json linearGraph() {
  return {
      {"tracer", "fx"},
      {"inputs", {{{"name", "x"}, {"shape", {8, 16}}, {"dtype", "float32"}}}},
      {"params",
       {{{"name", "linear.weight"}, {"shape", {32, 16}}, {"dtype", "float32"}},
        {{"name", "linear.bias"}, {"shape", {32}}, {"dtype", "float32"}},
        {{"name", "extra_bias"}, {"shape", {32}}, {"dtype", "float32"}}}},
      {"nodes",
       {node("linear", "linear", {"x", "linear.weight", "linear.bias"}, {8, 32}),
        node("add", "add", {"linear", "extra_bias"}, {8, 32}, {{"alpha", 1}}),
        node("relu", "relu", {"add"}, {8, 32})}},
      {"outputs", {"relu"}},
      {"batch", {{"name", "batch_size"}, {"value", 8}}},
      {"alt_shapes", {{"x", {9, 16}}, {"linear", {9, 32}}, {"add", {9, 32}}, {"relu", {9, 32}}}}};
}

json source() {
  return {{"prelude", {{{"line", 1}, {"text", "import torch\n"}}}},
          {"methods",
           {{{"name", "__init__"},
             {"line", 5},
             {"text",
              "    def __init__(self, a, b):\n        super(Model, self).__init__()\n"
              "        self.linear = nn.Linear(a, b)\n"}}}}};
}

TEST(SynthPartition, FusesAnEpilogueIntoTheMatrixProduct) {
  const OpGraph g = parseGraph(linearGraph());
  const Partition p = partition(g);
  ASSERT_TRUE(p.unsupported.empty());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kind, GroupKind::Matmul);
  EXPECT_EQ(p.groups[0].nodes.size(), 3u);
  EXPECT_EQ(p.groups[0].stores, std::vector<std::string>{"relu"});
}

TEST(SynthPartition, RmsNormWrittenInTorchOpsIsOneRowProgram) {
  json g = {
      {"inputs", {{{"name", "x"}, {"shape", {4, 6, 8}}, {"dtype", "float32"}}}},
      {"params", {{{"name", "weight"}, {"shape", {8}}, {"dtype", "float32"}}}},
      {"nodes",
       {node("p", "pow", {"x"}, {4, 6, 8}, {{"exponent", 2}}),
        node("m", "mean", {"p"}, {4, 6, 1}, {{"dim", -1}, {"keepdim", true}}),
        node("a", "add", {"m", 1e-6}, {4, 6, 1}), node("r", "rsqrt", {"a"}, {4, 6, 1}),
        node("y", "mul", {"x", "r"}, {4, 6, 8}), node("z", "mul", {"y", "weight"}, {4, 6, 8})}},
      {"outputs", {"z"}}};
  const Partition p = partition(parseGraph(g));
  ASSERT_TRUE(p.unsupported.empty());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kind, GroupKind::Row);
  EXPECT_EQ(p.groups[0].reduce.dims, std::vector<int>{2});
  EXPECT_EQ(p.groups[0].stores, std::vector<std::string>{"z"});
}

TEST(SynthPartition, SoftmaxAfterALinearIsASecondGroupReadingItsOutput) {
  json g = linearGraph();
  g["nodes"] = {node("linear", "linear", {"x", "linear.weight", "linear.bias"}, {8, 32}),
                node("sm", "softmax", {"linear"}, {8, 32}, {{"dim", 1}})};
  g["outputs"] = {"sm"};
  const Partition p = partition(parseGraph(g));
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].kind, GroupKind::Matmul);
  EXPECT_EQ(p.groups[0].stores, std::vector<std::string>{"linear"});
  EXPECT_EQ(p.groups[1].kind, GroupKind::Row);
  EXPECT_EQ(p.groups[1].reduce.dims, std::vector<int>{1});
}

TEST(SynthPartition, UnknownOpsAreReportedByNameAndLine) {
  json g = linearGraph();
  g["nodes"].push_back(node("f", "unknown", {"relu"}, {8, 17}, {{"target", "torch.fft.rfft"}}, 12));
  const Partition p = partition(parseGraph(g));
  ASSERT_EQ(p.unsupported.size(), 1u);
  EXPECT_EQ(p.unsupported[0], "line 12: torch.fft.rfft");
  const SynthResult r = synthesizeFromTrace(g, source(), {}, "ref.py");
  EXPECT_TRUE(r.candidates.empty());
  EXPECT_EQ(r.unsupported, p.unsupported);
}

TEST(SynthPartition, AMeanOverSeveralDimsIsOneRowProgramButASoftmaxOverThemIsUnsupported) {
  json g = {{"inputs", {{{"name", "x"}, {"shape", {2, 3, 4, 5}}, {"dtype", "float32"}}}},
            {"params", json::array()},
            {"nodes", {node("m", "mean", {"x"}, {2, 3}, {{"dim", {3, 2}}}, 7)}},
            {"outputs", {"m"}}};
  Partition p = partition(parseGraph(g));
  ASSERT_TRUE(p.unsupported.empty());
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].reduce.dims, (std::vector<int>{2, 3}));
  const SynthResult r = synthesizeFromTrace(g, source(), {}, "ref.py");
  ASSERT_FALSE(r.candidates.empty());
  // A row runs over (h, w): its columns split into both coordinates, the last fastest, for
  // views whose (h, w) are not one run of addresses; the others take cols times w's stride.
  const std::string& code = r.candidates[0].code;
  EXPECT_NE(code.find("k2 = (cols // cs3)\n"), std::string::npos);
  EXPECT_NE(code.find("k3 = cols % cs3\n"), std::string::npos);
  EXPECT_NE(code.find("(cols * x0_s3 if FLAT_x0 else k2 * x0_s2 + k3 * x0_s3)"), std::string::npos);
  EXPECT_NE(code.find("_flat(_x0.stride(), (2, 3, ), (_dom0[2], _dom0[3], ))"), std::string::npos);
  EXPECT_NE(r.candidates[0].code.find("_R = _dom0[2] * _dom0[3]"), std::string::npos);
  g["nodes"] = {node("s", "softmax", {"x"}, {2, 3, 4, 5}, {{"dim", {2, 3}}}, 7)};
  p = partition(parseGraph(g));
  ASSERT_EQ(p.unsupported.size(), 1u);
  EXPECT_NE(p.unsupported[0].find("line 7: softmax"), std::string::npos);
}

TEST(SynthPartition, NormsOfImagesAreRowPrograms) {
  json g = {{"inputs", {{{"name", "x"}, {"shape", {2, 8, 4, 4}}, {"dtype", "float32"}}}},
            {"params",
             {{{"name", "gn.weight"}, {"shape", {8}}, {"dtype", "float32"}},
              {{"name", "gn.bias"}, {"shape", {8}}, {"dtype", "float32"}}}},
            {"nodes",
             {node("gn", "group_norm", {"x", "gn.weight", "gn.bias"}, {2, 8, 4, 4},
                   {{"num_groups", 4}, {"eps", 1e-5}}),
              node("in", "instance_norm", {"gn", nullptr, nullptr, nullptr, nullptr}, {2, 8, 4, 4},
                   {{"use_input_stats", true}}),
              node("bn", "batch_norm", {"in", nullptr, nullptr, "gn.weight", "gn.bias"},
                   {2, 8, 4, 4}, {{"training", true}})}},
            {"outputs", {"bn"}}};
  const Partition p = partition(parseGraph(g));
  ASSERT_TRUE(p.unsupported.empty()) << p.unsupported[0];
  ASSERT_EQ(p.groups.size(), 3u);
  // group norm: a row is one group of 2 channels over (h, w); its rows are (batch, group).
  EXPECT_EQ(p.groups[0].reduce.dims, (std::vector<int>{2, 3}));
  EXPECT_EQ(p.groups[0].reduce.splitDim, 1);
  EXPECT_EQ(p.groups[0].reduce.splitParts, 4);
  EXPECT_EQ(p.groups[1].reduce.dims, (std::vector<int>{2, 3}));
  EXPECT_EQ(p.groups[2].reduce.dims, (std::vector<int>{0, 2, 3}));
  const SynthResult r = synthesizeFromTrace(g, source(), {}, "ref.py");
  ASSERT_FALSE(r.candidates.empty()) << r.unsupported[0];
  const std::string& code = r.candidates[0].code;
  // channel = group * size + index: the group's part of the address, then the index's
  EXPECT_NE(code.find("r1 * cs1 * x0_s1 + (cols * x0_s3 if FLAT_x0 else k1 * x0_s1 + "),
            std::string::npos);
  EXPECT_NE(code.find("k1 = (cols // (cs2 * cs3))\n"), std::string::npos);
  EXPECT_NE(code.find("self.gn.weight.reshape(-1, 1, 1).expand(_dom0)"), std::string::npos);
  EXPECT_NE(code.find("_R = (_dom0[1] // 4) * _dom0[2] * _dom0[3]"), std::string::npos);
}

TEST(SynthPartition, ConvolutionTakesItsEpilogueAndPoolingIsItsOwnGroup) {
  json g = {{"inputs", {{{"name", "x"}, {"shape", {2, 3, 8, 8}}, {"dtype", "float32"}}}},
            {"params",
             {{{"name", "conv.weight"}, {"shape", {4, 3, 3, 3}}, {"dtype", "float32"}},
              {{"name", "conv.bias"}, {"shape", {4}}, {"dtype", "float32"}}}},
            {"nodes",
             {node("conv", "conv2d", {"x", "conv.weight", "conv.bias"}, {2, 4, 8, 8},
                   {{"stride", {1, 1}}, {"padding", {1, 1}}, {"dilation", {1, 1}}, {"groups", 1}}),
              node("r", "relu", {"conv"}, {2, 4, 8, 8}),
              node("p", "max_pool2d", {"r"}, {2, 4, 4, 4}, {{"kernel_size", 2}, {"stride", 2}}),
              node("h", "hardtanh", {"p"}, {2, 4, 4, 4}, {{"min_val", -0.5}, {"max_val", 0.5}})}},
            {"outputs", {"h"}}};
  const Partition p = partition(parseGraph(g));
  ASSERT_TRUE(p.unsupported.empty());
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].kind, GroupKind::Conv);
  EXPECT_EQ(p.groups[0].stores, std::vector<std::string>{"r"});
  EXPECT_EQ(p.groups[1].kind, GroupKind::Conv);
  EXPECT_EQ(p.groups[1].nodes.size(), 2u);
  const SynthResult r = synthesizeFromTrace(g, source(), {}, "ref.py");
  ASSERT_FALSE(r.candidates.empty());
  const std::string& code = r.candidates[0].code;
  EXPECT_NE(code.find("for kh in tl.static_range(Kh):"), std::string::npos);
  EXPECT_NE(code.find("acc = tl.maximum(acc, xv)"), std::string::npos);
  EXPECT_NE(code.find("Kh=3, Sh=1, Ph=1, Dh=1"), std::string::npos);
}

/// x (2, 3, 8, 8) -> `op` with a (wshape) weight and bias -> relu.
json convGraph(const std::string& op, json wshape, json outShape, json attrs) {
  return {{"inputs", {{{"name", "x"}, {"shape", {2, 3, 8, 8}}, {"dtype", "float32"}}}},
          {"params",
           {{{"name", "conv.weight"}, {"shape", wshape}, {"dtype", "float32"}},
            {{"name", "conv.bias"}, {"shape", {outShape[1]}}, {"dtype", "float32"}}}},
          {"nodes",
           {node("conv", op, {"x", "conv.weight", "conv.bias"}, outShape, attrs),
            node("r", "relu", {"conv"}, outShape)}},
          {"outputs", {"r"}}};
}

/// Up to n candidates for `backend`.
SynthResult synthFor(const json& g, const std::string& backend, int n) {
  SynthRequest request;
  request.maxCandidates = n;
  request.backend = backend;
  return synthesizeFromTrace(g, source(), request, "ref.py");
}

TEST(SynthCodegen, GpuCandidatesTryImplicitGemmWithTensorCoresBesideDirectLoops) {
  const json g = convGraph("conv2d", {4, 3, 3, 3}, {2, 4, 8, 8},
                           {{"stride", 1}, {"padding", 1}, {"dilation", 1}, {"groups", 1}});
  const SynthResult r = synthFor(g, "cuda", 8);
  ASSERT_EQ(r.candidates.size(), 8u) << (r.unsupported.empty() ? "" : r.unsupported[0]);
  // First the channels-last form: copies of the input and weight with C_in innermost, then a
  // K loop over (tap, channel block) whose tiles tensor cores read along K. The copies split
  // each value into a bfloat16 part and the rest, and the loop issues bf16x3's three products.
  const std::string& first = r.candidates[0].code;
  EXPECT_NE(first.find("def k0_to_channels_last(src, dst, lo, "), std::string::npos);
  EXPECT_NE(first.find("hi = v.to(tl.bfloat16)"), std::string::npos);
  EXPECT_NE(first.find("rest = v - hi.to(tl.float32)"), std::string::npos);
  EXPECT_NE(first.find("dtype=torch.bfloat16)"), std::string::npos);
  EXPECT_NE(first.find("_xl_lo = torch.empty_like(_xl)"), std::string::npos);
  EXPECT_NE(first.find("def k0_conv_gemm_cl("), std::string::npos);
  EXPECT_NE(first.find("a_tile = tl.load(p_x + a_at, mask=a_ok, other=0.0)"), std::string::npos);
  EXPECT_NE(first.find("a_lo = tl.load(p_x_lo + a_at, mask=a_ok, other=0.0)"), std::string::npos);
  for (const char* product :
       {"acc = tl.dot(a_lo, b_tile, acc)\n", "acc = tl.dot(a_tile, b_lo, acc)\n",
        "acc = tl.dot(a_tile, b_tile, acc)\n"}) {
    EXPECT_NE(first.find(product), std::string::npos) << product;
  }
  EXPECT_NE(first.find("_bw = min(max(_next_power_of_2(_dom0[3]), 16), 128)"), std::string::npos);
  EXPECT_NE(first.find("_bk = min(64, max(16, _next_power_of_2(_x.shape[1])))"), std::string::npos);
  // 3 stages of (128 x 64 + 64 x 16) elements, two bfloat16 parts each, where they fit: the
  // tile narrows to the 4 output channels (16 is tl.dot's least)
  EXPECT_NE(first.find("ROWS=_rows, BLOCK_W=_bw, BLOCK_N=16, BLOCK_K=_bk, PACKED=_packed, "
                       "num_warps=8, num_stages=_stages(3, 36864, _x.device)"),
            std::string::npos);
  // few input channels pack several taps into each K step
  EXPECT_NE(first.find("_packed = _x.shape[1] < 16"), std::string::npos);
  // The third splits into a TF32 part and the rest, in fp32, for three TF32 products.
  const std::string& third = r.candidates[2].code;
  EXPECT_NE(third.find("tl.store(lo + at, tl.where(hi == v, 0.0, v - hi), mask=mask)"),
            std::string::npos);
  EXPECT_EQ(third.find("bfloat16"), std::string::npos);
  // (128 x 32 + 32 x 16) elements, two fp32 parts each
  EXPECT_NE(third.find("num_stages=_stages(3, 36864, _x.device)"), std::string::npos);
  for (const char* product : {"acc = tl.dot(a_lo, b_tile, acc, input_precision=\"tf32\")",
                              "acc = tl.dot(a_tile, b_lo, acc, input_precision=\"tf32\")",
                              "acc = tl.dot(a_tile, b_tile, acc, input_precision=\"tf32\")"}) {
    EXPECT_NE(third.find(product), std::string::npos) << product;
  }
  // The fifth keeps tl.dot's own tf32x3 over unsplit copies.
  const std::string& fifth = r.candidates[4].code;
  EXPECT_NE(fifth.find("acc += tl.dot(a_tile, b_tile, input_precision=\"tf32x3\")"),
            std::string::npos);
  EXPECT_EQ(fifth.find("_lo"), std::string::npos);
  EXPECT_NE(r.candidates[0].label.find("channels-last"), std::string::npos);
  int channelsLast = 0, flat = 0, direct = 0;
  for (const auto& c : r.candidates) {
    channelsLast += c.code.find("def k0_conv_gemm_cl(") != std::string::npos;
    flat += c.code.find("def k0_conv_gemm(") != std::string::npos;
    direct += c.label.rfind("CONV=direct", 0) == 0;
  }
  EXPECT_EQ(channelsLast, 5);
  EXPECT_EQ(flat, 2);    // the flat implicit GEMM stays in the search
  EXPECT_EQ(direct, 1);  // and so do the direct loops
  // opencl starts from implicit GEMM (faster on PoCL) and keeps the direct loops second.
  const SynthResult cl = synthFor(g, "opencl", 2);
  ASSERT_EQ(cl.candidates.size(), 2u);
  EXPECT_NE(cl.candidates[0].code.find("def k0_conv_gemm("), std::string::npos);
  EXPECT_EQ(cl.candidates[1].label, "CONV=direct BLOCK=1024 warps=4");
}

TEST(SynthCodegen, HalfPrecisionConvolutionsAreNotSplit) {
  json g = convGraph("conv2d", {4, 3, 3, 3}, {2, 4, 8, 8},
                     {{"stride", 1}, {"padding", 1}, {"dilation", 1}, {"groups", 1}});
  for (auto* values : {&g["inputs"], &g["params"], &g["nodes"]}) {
    for (auto& v : *values) v["dtype"] = "float16";
  }
  const SynthResult r = synthFor(g, "cuda", 1);
  ASSERT_EQ(r.candidates.size(), 1u) << (r.unsupported.empty() ? "" : r.unsupported[0]);
  const std::string& code = r.candidates[0].code;
  EXPECT_NE(code.find("def k0_conv_gemm_cl("), std::string::npos);
  EXPECT_EQ(code.find("_lo"), std::string::npos);
  EXPECT_NE(code.find("acc += tl.dot(a_tile, b_tile, input_precision=\"tf32x3\")"),
            std::string::npos);
}

TEST(SynthTiles, AGpuProductNarrowerThanItsTileNarrowsTheTileAndGivesTheRowsTheWidth) {
  Tiling t;
  t.blockM = 128;
  t.blockN = 128;
  const Tiling asWritten = fitProductTile(t, 1 << 20, 8, true);
  EXPECT_EQ(asWritten.blockN, 128);  // the CPU menus' tiles stay as written
  t.fitToShape = true;
  const Tiling narrow = fitProductTile(t, 1 << 20, 8, true);
  EXPECT_EQ(narrow.blockN, 16);  // tl.dot's least
  EXPECT_EQ(narrow.blockM, 256);
  EXPECT_EQ(fitProductTile(t, 1 << 20, 40, true).blockN, 64);
  EXPECT_EQ(fitProductTile(t, 1 << 20, 8, false).blockM, 128);  // a gathered tile keeps its rows
  EXPECT_EQ(fitProductTile(t, 4096, 8, true).blockM, 128);      // too few rows to widen
  EXPECT_EQ(fitProductTile(t, 1 << 20, 200, true).blockN, 128);
}

TEST(SynthTiles, ShortRowsShareAProgramOnAGpuOnly) {
  json g = linearGraph();
  g["inputs"][0]["shape"] = {64, 8};
  g["nodes"] = {node("sm", "softmax", {"x"}, {64, 8}, {{"dim", 1}})};
  g["outputs"] = {"sm"};
  g.erase("alt_shapes");
  json volume = g;
  volume["nodes"] = json::array({g["nodes"][0]});
  volume["outputs"] = {"c"};
  const SynthResult gpu = synthFor(volume, "cuda", 1);
  ASSERT_EQ(gpu.candidates.size(), 1u) << (gpu.unsupported.empty() ? "" : gpu.unsupported[0]);
  EXPECT_NE(gpu.candidates[0].code.find("_per = max(1, min(max(1, 2048 // _block_r), 16384 // "
                                        "_block_r))"),
            std::string::npos)
      << gpu.candidates[0].code;
  const SynthResult cpu = synthFor(g, "opencl", 1);
  ASSERT_EQ(cpu.candidates.size(), 1u);
  EXPECT_NE(cpu.candidates[0].code.find("_per = max(1, min(4, 16384 // _block_r))"),
            std::string::npos);
}

/// The linear graph with a K of 16384.
json longKGraph() {
  json g = linearGraph();
  g["inputs"][0]["shape"] = {8, 16384};
  g["params"][0]["shape"] = {32, 16384};
  g["alt_shapes"]["x"] = {9, 16384};
  return g;
}

TEST(SynthCodegen, ALongKIsSummedInChunksOfAboutItsSquareRoot) {
  const json g = longKGraph();
  const std::string code = synthFor(g, "opencl", 1).candidates.at(0).code;
  // sqrt(16384) = 128: two BLOCK_K of 64
  EXPECT_NE(code.find("for kc in range(0, K, 128):"), std::string::npos) << code;
  EXPECT_NE(code.find("for k0 in range(kc, kc + 128, BLOCK_K):"), std::string::npos);
  EXPECT_NE(code.find("acc += part"), std::string::npos);
  const std::string shortK = synthFor(linearGraph(), "opencl", 1).candidates.at(0).code;
  EXPECT_EQ(shortK.find("part"), std::string::npos);
}

TEST(SynthCodegen, ALongKOverFewTilesIsSplitOverProgramsOnAGpu) {
  const json g = longKGraph();
  // One 8 x 32 tile: its K goes to 128 programs of 128 (one chunk of sqrt(K) each), whose
  // partials the product's kernel adds in order before the epilogue.
  const std::string code = synthFor(g, "cuda", 1).candidates.at(0).code;
  for (const char* line :
       {"def k0_matmul_part(", "for kc in range(pid_s * SPAN, pid_s * SPAN + SPAN, CHUNK):",
        "tl.store(partials + (pid_s * M + rm[:, None]) * N + rn[None, :], acc, mask=mask)",
        "_splits = _cdiv(_K, 128)",
        "_part = torch.empty((_splits, _M, _N), device=_a.device, dtype=torch.float32)",
        "[(_cdiv(_M, 128) * _cdiv(_N, 32), 1, _splits)]", "SPAN=128, CHUNK=128",
        "for s in range(SPLITS):", "SPLITS=_splits"}) {
    EXPECT_NE(code.find(line), std::string::npos) << line << "\n" << code;
  }
  // The CPU backends keep one program per tile.
  EXPECT_EQ(synthFor(g, "opencl", 1).candidates.at(0).code.find("_part"), std::string::npos);
}

/// The linear graph as a rows x depth input times a columns x depth weight.
json productGraph(std::int64_t rows, std::int64_t depth, std::int64_t columns) {
  json g = linearGraph();
  g["inputs"][0]["shape"] = {rows, depth};
  g["params"][0]["shape"] = {columns, depth};
  g["params"][1]["shape"] = {columns};
  g["params"][2]["shape"] = {columns};
  for (auto& n : g["nodes"]) n["shape"] = {rows, columns};
  g.erase("alt_shapes");
  return g;
}

TEST(SynthTiles, AGpuProductWhoseWideTilesLeaveItsLastWaveIdleTakesSmallerTiles) {
  // 512 x 2048 outputs are 64 tiles of 128 x 128, half a large GPU: four times the programs
  const std::string few = synthFor(productGraph(512, 2048, 2048), "cuda", 1).candidates.at(0).code;
  EXPECT_NE(few.find("BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, GROUP_M=8, num_warps=4"),
            std::string::npos)
      << few;
  EXPECT_NE(few.find("_cdiv(_M, 64) * _cdiv(_N, 64)"), std::string::npos);
  // a K under 2048 steps by 32
  const std::string shallow =
      synthFor(productGraph(512, 1024, 2048), "cuda", 1).candidates.at(0).code;
  EXPECT_NE(shallow.find("BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, num_warps=4"),
            std::string::npos)
      << shallow;
  // 1024 x 2048 are 128 tiles, a whole wave: kept as written
  const std::string full =
      synthFor(productGraph(1024, 2048, 2048), "cuda", 1).candidates.at(0).code;
  EXPECT_NE(full.find("BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=8"),
            std::string::npos)
      << full;
  // a long K over few tiles is split instead, with the tile as written
  const std::string longK =
      synthFor(productGraph(512, 16384, 256), "cuda", 1).candidates.at(0).code;
  EXPECT_NE(longK.find("def k0_matmul_part("), std::string::npos);
  EXPECT_NE(longK.find("BLOCK_M=128, BLOCK_N=128, BLOCK_K=32"), std::string::npos);
  // the CPU backends keep their tiles
  const std::string cpu =
      synthFor(productGraph(512, 2048, 2048), "opencl", 1).candidates.at(0).code;
  EXPECT_NE(cpu.find("BLOCK_M=128, BLOCK_N=128, BLOCK_K=64"), std::string::npos);
}

TEST(SynthCodegen, GpuProductsSplitDenseFp32OperandsIntoBfloat16Parts) {
  // tf32x3 in two tilings first; then bf16x3 over parts a split kernel writes in each operand's
  // own layout, with tl.dot's tf32x3 kept in the kernel for operands that are not dense; then
  // exact.
  const SynthResult r = synthFor(linearGraph(), "cuda", 4);
  ASSERT_EQ(r.candidates.size(), 4u) << (r.unsupported.empty() ? "" : r.unsupported[0]);
  EXPECT_EQ(r.candidates[0].code.find("bfloat16"), std::string::npos);
  EXPECT_EQ(r.candidates[1].code.find("bfloat16"), std::string::npos);
  EXPECT_NE(r.candidates[3].code.find("input_precision=\"ieee\""), std::string::npos);
  const std::string& split = r.candidates[2].code;
  for (const char* line :
       {"def k0_split(src, hi_p, lo_p, n, BLOCK: tl.constexpr):", "hi = v.to(tl.bfloat16)",
        "rest = v - hi.to(tl.float32)", "_split = _dense(_a) and _dense(_b)",
        "_a_hi = torch.empty_strided(_a.shape, _a.stride(), device=_a.device, "
        "dtype=torch.bfloat16)",
        "if SPLIT:", "acc = tl.dot(a_lo_tile, b_tile, acc)\n",
        "acc = tl.dot(a_tile, b_lo_tile, acc)\n", "acc = tl.dot(a_tile, b_tile, acc)\n",
        "acc += tl.dot(a_tile, b_tile, input_precision=\"tf32x3\")", "SPLIT=_split"}) {
    EXPECT_NE(split.find(line), std::string::npos) << line;
  }
  EXPECT_NE(r.candidates[2].label.find("bf16x3-split"), std::string::npos);
  // 4 stages of (64 x 32 + 32 x 32) elements, two bfloat16 parts each, where they fit (the
  // tile narrowed to the product's 32 columns)
  EXPECT_NE(split.find("num_stages=_stages(4, 12288, _a.device)"), std::string::npos);
  // Half-precision products are not split.
  json half = linearGraph();
  for (auto* values : {&half["inputs"], &half["params"], &half["nodes"]}) {
    for (auto& v : *values) v["dtype"] = "float16";
  }
  const SynthResult h = synthFor(half, "cuda", 1);
  ASSERT_EQ(h.candidates.size(), 1u) << (h.unsupported.empty() ? "" : h.unsupported[0]);
  EXPECT_EQ(h.candidates[0].code.find("_split"), std::string::npos);
}

TEST(SynthCodegen, GroupedConvolutionsAndPoolingKeepDirectLoops) {
  const json g = convGraph("conv2d", {3, 1, 3, 3}, {2, 3, 8, 8},
                           {{"stride", 1}, {"padding", 1}, {"dilation", 1}, {"groups", 3}});
  const SynthResult r = synthFor(g, "cuda", 8);
  ASSERT_FALSE(r.candidates.empty());
  for (const auto& c : r.candidates) {
    EXPECT_EQ(c.label.rfind("CONV=direct", 0), 0u) << c.label;
    EXPECT_EQ(c.code.find("conv_gemm"), std::string::npos);
  }
}

TEST(SynthCodegen, TransposedConvolutionsGatherOnlyTapsOnTheStrideGrid) {
  const json g = convGraph(
      "conv_transpose2d", {3, 4, 3, 3}, {2, 4, 16, 16},
      {{"stride", 2}, {"padding", 1}, {"output_padding", 1}, {"dilation", 1}, {"groups", 1}});
  const SynthResult r = synthFor(g, "opencl", 2);
  ASSERT_EQ(r.candidates.size(), 2u) << (r.unsupported.empty() ? "" : r.unsupported[0]);
  const std::string& direct = r.candidates[1].code;
  EXPECT_NE(direct.find("th = oh + Ph - kh * Dh"), std::string::npos);
  EXPECT_NE(direct.find("(th >= 0) & (ih * Sh == th)"), std::string::npos);
  EXPECT_NE(direct.find("p_w + (first + ci) * w_s0 + (co % COUT_G) * w_s1"), std::string::npos);
  const std::string& gemm = r.candidates[0].code;
  EXPECT_NE(gemm.find("p_w + ci[:, None] * w_s0 + rn[None, :] * w_s1"), std::string::npos);
  // The implicit GEMM takes one stride class per program column, and only the class's taps.
  EXPECT_NE(gemm.find("kh = first_h + (rk % Th) * Sh"), std::string::npos);
  EXPECT_EQ(gemm.find("(ih * Sh == th)"), std::string::npos);
}

TEST(SynthCodegen, GpuConvolutionsInOneDimensionAndTransposedOnesAreChannelsLast) {
  json g = convGraph("conv1d", {4, 3, 5}, {2, 4, 8},
                     {{"stride", 1}, {"padding", 2}, {"dilation", 1}, {"groups", 1}});
  g["inputs"][0]["shape"] = {2, 3, 8};
  const SynthResult r = synthFor(g, "cuda", 1);
  ASSERT_EQ(r.candidates.size(), 1u) << (r.unsupported.empty() ? "" : r.unsupported[0]);
  const std::string& code = r.candidates[0].code;
  EXPECT_NE(code.find("def k0_conv_gemm_cl("), std::string::npos);
  EXPECT_NE(code.find("iw = ow * Sw - Pw + tap * Dw"), std::string::npos);
  EXPECT_NE(code.find("pos = bi * Iw + iw"), std::string::npos);
  EXPECT_NE(code.find("_rows = 1"), std::string::npos);
  EXPECT_NE(code.find("Kw=5, Sw=1, Pw=2, Dw=1"), std::string::npos);
  // A transposed convolution: one program per stride class (grid axis 2), its taps c, c + S...
  json t = convGraph(
      "conv_transpose2d", {3, 4, 3, 3}, {2, 4, 16, 16},
      {{"stride", 2}, {"padding", 1}, {"output_padding", 1}, {"dilation", 1}, {"groups", 1}});
  const SynthResult tr = synthFor(t, "cuda", 1);
  ASSERT_EQ(tr.candidates.size(), 1u) << (tr.unsupported.empty() ? "" : tr.unsupported[0]);
  const std::string& tc = tr.candidates[0].code;
  EXPECT_NE(tc.find("def k0_conv_gemm_cl("), std::string::npos);
  EXPECT_NE(tc.find("_w = self.conv.weight.transpose(0, 1)"), std::string::npos) << tc;
  EXPECT_NE(tc.find("oh = (ch + Sh - Ph % Sh) % Sh + (th * ROWS + r // BLOCK_W) * Sh"),
            std::string::npos);
  EXPECT_NE(tc.find("for step in range(0, TH * TW * CB):"), std::string::npos);
  EXPECT_NE(tc.find("_cdiv(_dom0[1], 16), 4)"), std::string::npos);
  EXPECT_NE(tr.candidates[0].label.find("channels-last"), std::string::npos);
  // With dilation the taps of a class are no longer every S-th: the flat form takes it.
  t["nodes"][0]["attrs"]["dilation"] = 2;
  const SynthResult dilated = synthFor(t, "cuda", 1);
  ASSERT_EQ(dilated.candidates.size(), 1u);
  EXPECT_EQ(dilated.candidates[0].code.find("conv_gemm_cl"), std::string::npos);
  EXPECT_EQ(dilated.candidates[0].label.find("channels-last"), std::string::npos);
  EXPECT_NE(dilated.candidates[0].code.find("def k0_conv_gemm("), std::string::npos);
}

TEST(SynthCodegen, AStridedTransposedConvolutionGathersOnlyItsStrideClassTaps) {
  // 3-D at stride 2: each program column is one of the 8 stride classes, and its K runs over
  // the class's taps (2 of 3 per dim at most), not over all 27 with 7 in 8 masked out.
  json g = convGraph(
      "conv_transpose3d", {3, 4, 3, 3, 3}, {2, 4, 8, 8, 8},
      {{"stride", 2}, {"padding", 1}, {"output_padding", 1}, {"dilation", 1}, {"groups", 1}});
  g["inputs"][0]["shape"] = {2, 3, 4, 4, 4};
  const SynthResult r = synthFor(g, "opencl", 1);
  ASSERT_EQ(r.candidates.size(), 1u) << (r.unsupported.empty() ? "" : r.unsupported[0]);
  const std::string& code = r.candidates[0].code;
  for (const char* line :
       {"cls = tl.program_id(2)", "first_d = (cd + Pd) % Sd", "Td = (Kd + Sd - 1) // Sd",
        "ow = cw + (rem % ((Ow + Sw - 1) // Sw)) * Sw",
        "row_ok = (rm < M) & (ow < Ow) & (oh < Oh) & (od < Od)", "KTOT = C_IN * Td * Th * Tw",
        "kd = first_d + (rk % Td) * Sd", "td = od[:, None] + Pd - kd[None, :]",
        "_M = _dom0[0] * _cdiv(_dom0[2], 2) * _cdiv(_dom0[3], 2) * "
        "_cdiv(_dom0[4], 2)",
        "1 * 2 * 2 * 2)"}) {
    EXPECT_NE(code.find(line), std::string::npos) << line << "\n" << code;
  }
  // Without a stride, or with dilation, every tap stays in one K loop.
  for (auto [stride, dilation] : {std::pair{1, 1}, std::pair{2, 2}}) {
    json other = g;
    other["nodes"][0]["attrs"]["stride"] = stride;
    other["nodes"][0]["attrs"]["dilation"] = dilation;
    const SynthResult o = synthFor(other, "opencl", 1);
    ASSERT_EQ(o.candidates.size(), 1u) << (o.unsupported.empty() ? "" : o.unsupported[0]);
    EXPECT_EQ(o.candidates[0].code.find("cls = "), std::string::npos);
  }
}

TEST(SynthCodegen, AdaptivePoolingWithUnevenWindowsAveragesEachWindowItsOwnSize) {
  json g = {{"inputs", {{{"name", "x"}, {"shape", {2, 3, 10}}, {"dtype", "float32"}}}},
            {"params", json::array()},
            {"nodes", {node("p", "adaptive_avg_pool1d", {"x"}, {2, 3, 4}, {{"output_size", 4}})}},
            {"outputs", {"p"}}};
  const SynthResult r = synthesizeFromTrace(g, source(), {}, "ref.py");
  ASSERT_FALSE(r.candidates.empty()) << (r.unsupported.empty() ? "" : r.unsupported[0]);
  const std::string& code = r.candidates[0].code;
  // 10 -> 4: windows [0, 3), [2, 5), [5, 8), [7, 10); the largest has 3 taps.
  EXPECT_NE(code.find("Kw=3, Sw=1, Pw=0, Dw=1"), std::string::npos);
  EXPECT_NE(code.find("endw = ((ow + 1) * Iw + Ow - 1) // Ow"), std::string::npos);
  EXPECT_NE(code.find("acc / count"), std::string::npos);
  g["nodes"] = {node("p", "avg_pool1d", {"x"}, {2, 3, 5},
                     {{"kernel_size", 2}, {"padding", 1}, {"count_include_pad", false}}, 9)};
  const SynthResult no = synthesizeFromTrace(g, source(), {}, "ref.py");
  EXPECT_TRUE(no.candidates.empty());
  ASSERT_EQ(no.unsupported.size(), 1u);
  EXPECT_NE(no.unsupported[0].find("count_include_pad"), std::string::npos);
}

TEST(SynthCodegen, AttentionsFourDimensionalProductsRunOverBothBatchDims) {
  // q, k = qkv[0], qkv[1] (basic indexing: views); scores = q @ k^T over (batch, heads).
  json g = {{"inputs", {{{"name", "qkv"}, {"shape", {2, 2, 3, 4, 5}}, {"dtype", "float32"}}}},
            {"params", json::array()},
            {"nodes",
             {node("q", "index", {"qkv"}, {2, 3, 4, 5}, {{"key", "0"}}),
              node("k", "index", {"qkv"}, {2, 3, 4, 5}, {{"key", "1"}}),
              node("kt", "transpose", {"k"}, {2, 3, 5, 4}, {{"dim0", -2}, {"dim1", -1}}),
              node("s", "matmul", {"q", "kt"}, {2, 3, 4, 4})}},
            {"outputs", {"s"}}};
  const SynthResult r = synthesizeFromTrace(g, source(), {}, "ref.py");
  ASSERT_FALSE(r.candidates.empty()) << (r.unsupported.empty() ? "" : r.unsupported[0]);
  const std::string& code = r.candidates[0].code;
  EXPECT_NE(code.find("v_q = qkv[0]"), std::string::npos);
  EXPECT_NE(code.find("_B1 = _a.shape[1]"), std::string::npos);
  EXPECT_NE(code.find("_prod(_a.shape[:-2])"), std::string::npos);
  EXPECT_NE(code.find("b0 * a_sb0 + b1 * a_sb1"), std::string::npos);
  // A key the trace stage would never write is refused, not pasted into the candidate.
  g["nodes"][0]["attrs"]["key"] = "__import__('os')";
  const SynthResult bad = synthesizeFromTrace(g, source(), {}, "ref.py");
  EXPECT_TRUE(bad.candidates.empty());
  ASSERT_FALSE(bad.unsupported.empty());
  EXPECT_NE(bad.unsupported[0].find("indexing with"), std::string::npos);
}

TEST(SynthCodegen, ParametersOfNumberedChildrenAreIndexed) {
  json g = linearGraph();
  g["params"][0]["name"] = "network.0.weight";
  g["nodes"][0]["inputs"][1] = "network.0.weight";
  const SynthResult r = synthesizeFromTrace(g, source(), {}, "ref.py");
  ASSERT_FALSE(r.candidates.empty());
  EXPECT_NE(r.candidates[0].code.find("self.network[0].weight.t()"), std::string::npos);
}

TEST(SynthCodegen, WritesAModelNewThatReusesTheConstructorAndLaunchesOnly) {
  SynthRequest request;
  request.maxCandidates = 3;
  const SynthResult r = synthesizeFromTrace(linearGraph(), source(), request, "ref.py");
  ASSERT_TRUE(r.unsupported.empty());
  ASSERT_EQ(r.candidates.size(), 3u);
  const std::string& code = r.candidates[0].code;
  EXPECT_NE(code.find("class ModelNew(nn.Module):"), std::string::npos);
  EXPECT_NE(code.find("super(ModelNew, self).__init__()"), std::string::npos);
  EXPECT_EQ(code.find("super(Model, self)"), std::string::npos);
  EXPECT_NE(code.find("tl.dot(a_tile, b_tile"), std::string::npos);
  EXPECT_NE(code.find("tl.maximum(v_add, 0.0)"), std::string::npos);
  // The batch is read from the input, not baked in: the verifier also runs batch + 1.
  EXPECT_NE(code.find("nb = x.shape[0]"), std::string::npos);
  EXPECT_NE(code.find("torch.empty((nb, 32)"), std::string::npos);
  // No torch compute in forward: the linear is never called.
  EXPECT_EQ(code.find("self.linear("), std::string::npos);
  EXPECT_EQ(code.find("F."), std::string::npos);
  EXPECT_NE(r.candidates[0].label, r.candidates[1].label);
  EXPECT_NE(r.candidates[0].plan.find("matmul [linear -> add -> relu]"), std::string::npos);
}

TEST(SynthCodegen, OpenclBlocksAreSmallSoACpuDeviceRunsSeveralPrograms) {
  // One program is one work-item on PoCL: the interpreter's few large programs would leave the
  // cores idle, so the opencl menu starts from 1024-element blocks.
  json g = linearGraph();
  g["nodes"] = {node("relu", "relu", {"x"}, {8, 16})};
  g["outputs"] = {"relu"};
  g["params"] = json::array();
  g["alt_shapes"] = {{"x", {9, 16}}, {"relu", {9, 16}}};
  SynthRequest request;
  request.maxCandidates = 1;
  request.backend = "opencl";
  const SynthResult cl = synthesizeFromTrace(g, source(), request, "ref.py");
  ASSERT_EQ(cl.candidates.size(), 1u) << (cl.unsupported.empty() ? "" : cl.unsupported[0]);
  EXPECT_EQ(cl.candidates[0].label, "BLOCK=1024 warps=4");
  request.backend = "interpret";
  const SynthResult interp = synthesizeFromTrace(g, source(), request, "ref.py");
  ASSERT_EQ(interp.candidates.size(), 1u);
  EXPECT_EQ(interp.candidates[0].label, "BLOCK=16384 warps=8");
}

TEST(SynthCodegen, ContiguousPointwiseOperandsTakeAFlatIndexedKernel) {
  // relu(x) + y: both operands have the output's shape, so when both are contiguous the host
  // launches a kernel that loads them at the flat index; otherwise the strided one.
  json g = linearGraph();
  g["inputs"] = {{{"name", "x"}, {"shape", {8, 16}}, {"dtype", "float32"}},
                 {{"name", "y"}, {"shape", {8, 16}}, {"dtype", "float32"}}};
  g["nodes"] = {node("relu", "relu", {"x"}, {8, 16}), node("add", "add", {"relu", "y"}, {8, 16})};
  g["outputs"] = {"add"};
  g["params"] = json::array();
  g["alt_shapes"] = {{"x", {9, 16}}, {"y", {9, 16}}, {"relu", {9, 16}}, {"add", {9, 16}}};
  SynthRequest request;
  request.maxCandidates = 1;
  request.backend = "opencl";
  const SynthResult r = synthesizeFromTrace(g, source(), request, "ref.py");
  ASSERT_EQ(r.candidates.size(), 1u) << (r.unsupported.empty() ? "" : r.unsupported[0]);
  const std::string& code = r.candidates[0].code;
  EXPECT_NE(code.find("_pointwise_dense(p_x0, p_x1,"), std::string::npos) << code;
  EXPECT_NE(code.find("tl.load(p_x0 + offs, mask=mask"), std::string::npos) << code;
  EXPECT_NE(code.find("if _x0.is_contiguous() and _x1.is_contiguous():"), std::string::npos)
      << code;
  EXPECT_NE(code.find("else:"), std::string::npos);
}

TEST(SynthCodegen, ADimensionThatIsNotAMultipleOfTheBatchIsUnsupported) {
  json g = linearGraph();
  g["alt_shapes"]["relu"] = {10, 32};
  const SynthResult r = synthesizeFromTrace(g, source(), {}, "ref.py");
  EXPECT_TRUE(r.candidates.empty());
  ASSERT_FALSE(r.unsupported.empty());
  EXPECT_NE(r.unsupported[0].find("not a multiple"), std::string::npos);
}

TEST(SynthCodegen, PointwiseExpressions) {
  std::string why;
  OpNode n;
  n.op = "gelu";
  EXPECT_EQ(*pointwiseExpr(n, {"x"}, why), "0.5 * (x) * (1.0 + tl.erf((x) * 0.7071067811865476))");
  n.op = "clamp";
  n.attrs = {{"min", -0.25}, {"max", nullptr}};
  EXPECT_EQ(*pointwiseExpr(n, {"x"}, why), "tl.maximum(x, -0.25)");
  n.op = "pow";
  n.attrs = {{"exponent", 1.7}};  // NaN below zero, as torch's non-integer powers are
  EXPECT_EQ(*pointwiseExpr(n, {"x"}, why), "tl.exp(1.7 * tl.log(x))");
  n.attrs = {{"exponent", 12}};  // an integer power of a negative base is a number
  EXPECT_FALSE(pointwiseExpr(n, {"x"}, why));
  EXPECT_NE(why.find("exponent"), std::string::npos);
  EXPECT_EQ(floatLiteral(2), "2.0");
  EXPECT_EQ(floatLiteral(1e-5), "1.0000000000000001e-05");
}

TEST(SynthResultJson, RoundTrips) {
  SynthResult r;
  r.candidates.push_back({"code", "plan", "BLOCK=1024 warps=4"});
  r.unsupported = {"line 3: conv3d"};
  r.graph = {{"nodes", json::array()}};
  const SynthResult back = json(r).get<SynthResult>();
  ASSERT_EQ(back.candidates.size(), 1u);
  EXPECT_EQ(back.candidates[0].label, "BLOCK=1024 warps=4");
  EXPECT_EQ(back.unsupported, r.unsupported);
  EXPECT_EQ(back.graph, r.graph);
}

TEST(SynthGraph, MalformedGraphsAreErrors) {
  EXPECT_THROW(parseGraph(json::array()), GraphError);
  EXPECT_THROW(parseGraph(json{{"inputs", json::array()}}), GraphError);
}

}  // namespace
}  // namespace crucible::kernel_synth

namespace crucible::kernel_synth {
namespace {

json recurrentGraph(int params) {
  json inputs = {"x", nullptr, nullptr};
  json paramList = json::array();
  for (int i = 0; i < params; ++i) {
    const std::string name = "rnn.p" + std::to_string(i);
    inputs.push_back(name);
    paramList.push_back({{"name", name}, {"shape", {32, 8}}, {"dtype", "float32"}});
  }
  return {{"inputs", {{{"name", "x"}, {"shape", {4, 6, 8}}, {"dtype", "float32"}}}},
          {"params", paramList},
          {"nodes",
           {node("r", "recurrent", inputs, {4, 6, 8},
                 {{"mode", "LSTM"},
                  {"num_layers", 2},
                  {"hidden_size", 8},
                  {"bidirectional", false},
                  {"batch_first", true},
                  {"bias", true},
                  {"output", "sequence"}})}},
          {"outputs", {"r"}}};
}

TEST(SynthRecurrent, AnLstmIsATimeLoopOverItsCellKernel) {
  const SynthResult r = synthesizeFromTrace(recurrentGraph(8), source(), {}, "ref.py");
  ASSERT_EQ(r.candidates.size(), 1u) << (r.unsupported.empty() ? "" : r.unsupported.front());
  const std::string& code = r.candidates[0].code;
  EXPECT_NE(code.find("def k0_lstm_cell("), std::string::npos);
  EXPECT_NE(code.find("for _layer in range(2):"), std::string::npos);
  EXPECT_NE(code.find("_steps = range(_T) if _d == 0 else range(_T - 1, -1, -1)"),
            std::string::npos);
}

TEST(SynthRecurrent, TwoOutputsOfOneLayerRunItOnce) {
  json g = recurrentGraph(8);
  json second = g["nodes"][0];
  second["name"] = "r_c";
  second["attrs"]["output"] = "c_n";
  second["shape"] = {2, 4, 8};
  g["nodes"].push_back(second);
  g["outputs"] = {"r", "r_c"};
  const SynthResult r = synthesizeFromTrace(g, source(), {}, "ref.py");
  ASSERT_EQ(r.candidates.size(), 1u) << (r.unsupported.empty() ? "" : r.unsupported.front());
  const std::string& code = r.candidates[0].code;
  EXPECT_NE(code.find("def k0_lstm_cell("), std::string::npos);
  std::size_t cells = 0;  // one cell kernel: the second output runs no layer of its own
  for (auto at = code.find("_lstm_cell(pre,"); at != std::string::npos;
       at = code.find("_lstm_cell(pre,", at + 1)) {
    ++cells;
  }
  EXPECT_EQ(cells, 1u);
  EXPECT_NE(code.find("v_r_c = _cn"), std::string::npos);
}

TEST(SynthRecurrent, ALayerWhoseParametersDoNotAddUpIsNamed) {
  const SynthResult r = synthesizeFromTrace(recurrentGraph(6), source(), {}, "ref.py");
  EXPECT_TRUE(r.candidates.empty());
  ASSERT_EQ(r.unsupported.size(), 1u);
  EXPECT_NE(r.unsupported[0].find("recurrent layer"), std::string::npos) << r.unsupported[0];
}

}  // namespace
}  // namespace crucible::kernel_synth

namespace crucible::kernel_synth {
namespace {

TEST(SynthConvSpec, ATransposedConvolutionOfStrideOneIsAForwardOnePaddedByTheRestOfItsWindow) {
  ConvSpec s;
  s.kind = ConvSpec::Kind::Transposed;
  s.spatial = 2;
  s.window = {3, 2};
  s.stride = {1, 1};
  s.pad = {1, 0};
  s.dil = {2, 1};
  EXPECT_TRUE(s.flippedForward());
  EXPECT_TRUE(s.channelsLastApplies());
  const ConvSpec f = s.asFlippedForward();
  EXPECT_EQ(f.kind, ConvSpec::Kind::Conv);
  EXPECT_EQ(f.pad, (std::vector<int>{3, 1}));  // (K - 1) D - P
  s.stride = {2, 1};
  EXPECT_FALSE(s.flippedForward());
  s.spatial = 3;
  s.window = {3, 3, 3};
  s.stride = {2, 2, 2};
  s.pad = s.dil = {1, 1, 1};
  EXPECT_TRUE(s.channelsLastApplies());  // strided volumes run by stride class
  s.dil = {1, 2, 1};
  EXPECT_FALSE(s.channelsLastApplies());  // unless dilated: the flat form's
  s.stride = {1, 1, 1};
  EXPECT_TRUE(s.channelsLastApplies());
}

TEST(SynthConvSpec, VolumesHaveThreeAxesAndAdaptiveMaxPoolsTheirWindows) {
  json g = {
      {"inputs", {{{"name", "x"}, {"shape", {2, 4, 6, 7, 9}}, {"dtype", "float32"}}}},
      {"params", {{{"name", "w"}, {"shape", {8, 4, 3, 1, 2}}, {"dtype", "float32"}}}},
      {"nodes",
       {node("c", "conv3d", {"x", "w", nullptr}, {2, 8, 3, 7, 8},
             {{"stride", {2, 1, 1}}, {"padding", {0, 0, 0}}, {"dilation", 1}, {"groups", 1}}),
        node("p", "adaptive_max_pool3d", {"c"}, {2, 8, 2, 3, 4}, {{"output_size", {2, 3, 4}}}),
        node("q", "adaptive_max_pool3d", {"c"}, {2, 8, 2, 3, 4},
             {{"output_size", {2, 3, 4}}, {"return_indices", true}})}},
      {"outputs", {"p"}}};
  const OpGraph graph = parseGraph(g);
  std::string why;
  const auto conv = convSpec(graph, graph.nodes[0], why);
  ASSERT_TRUE(conv) << why;
  EXPECT_EQ(conv->spatial, 3);
  EXPECT_EQ(conv->axis(0) + conv->axis(1) + conv->axis(2), "dhw");
  EXPECT_EQ(conv->window, (std::vector<int>{3, 1, 2}));
  EXPECT_TRUE(conv->gemmApplies());
  EXPECT_TRUE(conv->channelsLastApplies());
  // On a GPU the volume's first candidate is the channels-last form, its tile's rows running
  // over (depth, height) together and its K over the three taps' axes.
  json volume = g;
  volume["nodes"] = json::array({g["nodes"][0]});
  volume["outputs"] = {"c"};
  const SynthResult gpu = synthFor(volume, "cuda", 1);
  ASSERT_EQ(gpu.candidates.size(), 1u) << (gpu.unsupported.empty() ? "" : gpu.unsupported[0]);
  for (const char* line :
       {"def k0_conv_gemm_cl(", "od = odh // Oh", "m_ok = (odh < Od * Oh) & (ow < Ow)",
        "kd = tap // (Kh * Kw)", "pos = ((bi * Id + id) * Ih + ih) * Iw + iw",
        "b_at = (rn[None, :] * (Kd * Kh * Kw) + (kd * Kh + kh) * Kw + kw) * C_IN + rk[:, None]",
        "_xl_dh = _x.flatten(2, 3)"}) {
    EXPECT_NE(gpu.candidates[0].code.find(line), std::string::npos) << line;
  }
  const auto pool = convSpec(graph, graph.nodes[1], why);
  ASSERT_TRUE(pool) << why;
  EXPECT_TRUE(pool->adaptive() && pool->takesMax());
  EXPECT_EQ(pool->window, (std::vector<int>{2, 3, 2}));  // from 3, 7, 8 inputs
  EXPECT_FALSE(convSpec(graph, graph.nodes[2], why));
  EXPECT_NE(why.find("return_indices"), std::string::npos);
}

TEST(SynthLaunchReuse, OnlyKernelsForwardLaunchesAreRoutedThroughTheReusedLauncher) {
  const std::string kernels =
      "\n\n@triton.jit\ndef k0_row_stats(x, n, BLOCK: tl.constexpr):\n    pass\n"
      "\n\n@triton.jit\ndef k0_row(x, n, BLOCK: tl.constexpr):\n    _helper(x)\n"
      "\n\n@triton.jit\ndef _helper(x):\n    pass\n";
  // k0_row_stats is launched, k0_row only appears inside another name, _helper only in kernels.
  const std::string body = "        k0_row_stats[(_rows,)](x, n, BLOCK=64)\n";
  EXPECT_EQ(reuseLaunchedKernels(kernels, body), "k0_row_stats = _Reused(k0_row_stats)\n");
  EXPECT_EQ(reuseLaunchedKernels(kernels, body + "        k0_row[(_rows,)](x, n, BLOCK=64)\n"),
            "k0_row_stats = _Reused(k0_row_stats)\nk0_row = _Reused(k0_row)\n");
  EXPECT_EQ(reuseLaunchedKernels(kernels, "        y = 1\n"), "");
  EXPECT_NE(std::string(kReusedLaunch).find("class _Reused:"), std::string::npos);
}

}  // namespace
}  // namespace crucible::kernel_synth
