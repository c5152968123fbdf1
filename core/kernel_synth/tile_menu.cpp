#include "core/kernel_synth/tile_menu.h"

#include <algorithm>

#include "core/kernel_synth/conv_spec.h"

namespace crucible::kernel_synth {

namespace {

Tiling pw(int block, int warps) {
  Tiling t;
  t.block = block;
  t.warps = warps;
  return t;
}

Tiling rw(int rows, int warps) {
  Tiling t;
  t.rows = rows;
  t.warps = warps;
  return t;
}

/// A product tiling: M x N x K blocks, warps, pipeline stages, GROUP_M and dot precision.
Tiling mm(int m, int n, int k, int warps, int stages = 0, int groupM = 1,
          const char* precision = "ieee") {
  Tiling t;
  t.blockM = m;
  t.blockN = n;
  t.blockK = k;
  t.warps = warps;
  t.stages = stages;
  t.groupM = groupM;
  t.precision = precision;
  return t;
}

/// A convolution tiling: implicit GEMM with `product`'s blocks, or direct loops of `block`
/// elements per program (also what pooling and grouped convolutions use).
Tiling cv(Tiling product, int block, bool gemm) {
  product.block = block;
  product.gemmConv = gemm;
  return product;
}

/// A GPU convolution tiling: implicit GEMM over channels-last copies with products that keep
/// fp32's 1e-4 tolerance: tf32x3 in the kernel, or three TF32 or bfloat16 products over
/// operands the copies split (kSplitPrecision, kBf16SplitPrecision); falling back to direct
/// loops of 256.
Tiling cl(int m, int n, int k, int warps, int stages, const char* precision = "tf32x3") {
  Tiling t = cv(mm(m, n, k, warps, stages, 1, precision), 256, true);
  t.channelsLast = true;
  return t;
}

struct Present {
  bool pointwise = false, row = false, matmul = false;
  bool gemmConv = false;          // convolutions implicit GEMM can take
  bool channelsLastConv = false;  // of those, ones the channels-last form takes
  bool directConv = false;        // pooling, grouped and transposed convolutions: direct loops only
};

Present kindsOf(const OpGraph& graph, const Partition& p) {
  Present k;
  for (const auto& g : p.groups) {
    k.pointwise |= g.kind == GroupKind::Pointwise;
    k.row |= g.kind == GroupKind::Row;
    k.matmul |= g.kind == GroupKind::Matmul;
    if (g.kind == GroupKind::Conv) {
      std::string why;
      const auto spec = convSpec(graph, graph.nodes[g.nodes.front()], why);
      (spec && spec->gemmApplies() ? k.gemmConv : k.directConv) = true;
      k.channelsLastConv |= spec && spec->channelsLastApplies();
    }
  }
  return k;
}

}  // namespace

TileMenu menuFor(const std::string& backend) {
  if (backend == "cuda") {
    const char* x3 = "tf32x3";
    const char* split = kSplitPrecision;
    const char* bf = kBf16SplitPrecision;
    TileMenu menu{
        {pw(1024, 4), pw(2048, 8), pw(4096, 8), pw(512, 4), pw(1024, 8), pw(8192, 16), pw(2048, 4),
         pw(256, 2)},
        {rw(1, 4), rw(4, 4), rw(16, 8), rw(2, 8), rw(1, 8), rw(8, 4), rw(1, 16), rw(32, 8)},
        // Products: tf32x3 128x128 and 128x64, then bf16x3 64x128 over operands split
        // beforehand, then exact (ieee) 64x64. bf16x3 is the faster on most level-2
        // products, but its parts keep 16 of fp32's 24 bits: on unit-normal operands its
        // error already reaches the 1e-4 tolerance at K of a few dozen, and misses it where
        // products are summed further. So both tf32x3 tilings come first, and the exact
        // tiling is there for products whose outputs spread over sqrt(K)
        // (docs/PERFORMANCE.md, "Built-in synthesizer", has the per-task figures).
        {mm(128, 128, 32, 8, 3, 8, x3), mm(128, 64, 32, 4, 4, 8, x3), mm(64, 128, 32, 4, 4, 8, bf),
         mm(64, 64, 32, 4, 3, 8), mm(128, 128, 32, 8, 3, 8, bf), mm(64, 128, 32, 4, 4, 8),
         mm(32, 64, 32, 4, 4, 1), mm(128, 256, 32, 8, 3, 8, x3)},
        // Channels-last implicit GEMM over operands split into bfloat16 parts first:
        // 128x128x64 in 3 stages, with 8 warps for wide channel counts and 4 for narrow ones,
        // is the fastest form the study finds (docs/studies/split_tf32_study.py
        // --conv-sweep); the best TF32 split comes next in case the bfloat16 parts miss the
        // tolerance. Their 3 stages take 192 KB of shared memory; a GPU with less runs fewer
        // stages (_stages).
        // Then tf32x3 in the kernel, and for dilated transposed convolutions the flat forms.
        {cl(128, 128, 64, 8, 3, bf), cl(128, 128, 64, 4, 3, bf), cl(128, 128, 32, 8, 3, split),
         cl(64, 128, 32, 4, 3, split), cl(128, 128, 64, 8, 3),
         cv(mm(128, 128, 32, 8, 3, 8, x3), 1024, true), cv(pw(256, 4), 256, false),
         cv(mm(64, 64, 32, 4, 3, 8), 256, true)}};
    for (auto* kind : {&menu.pointwise, &menu.row, &menu.matmul, &menu.conv})
      for (auto& t : *kind) t.fitToShape = true;
    return menu;
  }
  if (backend == "opencl") {
    // One program is one OpenCL work-item on a CPU device: the cores are filled by programs, so
    // blocks stay small enough that even small problems launch several of them. Products keep
    // 128x128 tiles: their micro-kernel amortises packing, which 64x64 tiles repeat too often.
    return {{pw(1024, 4), pw(4096, 4), pw(256, 4), pw(16384, 8)},
            {rw(4, 4), rw(1, 4), rw(16, 4), rw(64, 8)},
            {mm(128, 128, 64, 8), mm(64, 64, 32, 4), mm(32, 32, 32, 4), mm(64, 32, 64, 4)},
            // Implicit GEMM first: on PoCL it is many times faster than the direct loops, which
            // stay second (docs/PERFORMANCE.md, "OpenCL backend").
            {cv(mm(64, 64, 32, 4), 1024, true), cv(pw(1024, 4), 1024, false),
             cv(mm(128, 64, 64, 4), 4096, true), cv(pw(256, 4), 256, false)}};
  }
  return {{pw(16384, 8), pw(4096, 4), pw(1024, 4), pw(2048, 4)},
          {rw(64, 8), rw(16, 4), rw(4, 4), rw(1, 4)},
          {mm(128, 128, 64, 8), mm(64, 64, 32, 4), mm(32, 32, 32, 4), mm(64, 32, 64, 4)},
          {cv(pw(16384, 8), 16384, false), cv(mm(128, 64, 64, 4), 4096, true),
           cv(pw(1024, 4), 1024, false), cv(mm(64, 64, 32, 4), 2048, true)}};
}

std::vector<TileSet> tileSetsFor(const OpGraph& g, const Partition& p, const std::string& backend,
                                 int count) {
  const TileMenu menu = menuFor(backend);
  const std::size_t longest =
      std::max({menu.pointwise.size(), menu.row.size(), menu.matmul.size(), menu.conv.size()});
  std::vector<TileSet> sets;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < longest && static_cast<int>(sets.size()) < count; ++i) {
    TileSet t{menu.pointwise[i % menu.pointwise.size()], menu.row[i % menu.row.size()],
              menu.matmul[i % menu.matmul.size()], menu.conv[i % menu.conv.size()]};
    const std::string label = tileLabel(g, p, t);
    if (std::find(labels.begin(), labels.end(), label) != labels.end()) continue;
    labels.push_back(label);
    sets.push_back(t);
  }
  return sets;
}

std::string tileLabel(const OpGraph& g, const Partition& p, const TileSet& t) {
  const Present k = kindsOf(g, p);
  auto product = [&k](const Tiling& m) {
    return std::to_string(m.blockM) + "x" + std::to_string(m.blockN) + "x" +
           std::to_string(m.blockK) + " warps=" + std::to_string(m.warps) +
           (m.stages ? " stages=" + std::to_string(m.stages) : "") +
           (m.groupM > 1 ? " group=" + std::to_string(m.groupM) : "") +
           (m.precision != "ieee" ? " " + m.precision : "") +
           (m.channelsLast && k.channelsLastConv ? " channels-last" : "");
  };
  std::vector<std::string> parts;
  if (k.matmul) parts.push_back("BLOCK=" + product(t.matmul));
  if (k.gemmConv && t.conv.gemmConv) parts.push_back("CONV=gemm " + product(t.conv));
  if (k.directConv || (k.gemmConv && !t.conv.gemmConv)) {
    parts.push_back("CONV=direct BLOCK=" + std::to_string(t.conv.block) +
                    " warps=" + std::to_string(t.conv.warps));
  }
  if (k.row)
    parts.push_back("ROWS=" + std::to_string(t.row.rows) + " warps=" + std::to_string(t.row.warps));
  if (k.pointwise) {
    parts.push_back("BLOCK=" + std::to_string(t.pointwise.block) +
                    " warps=" + std::to_string(t.pointwise.warps));
  }
  std::string s;
  for (const auto& part : parts) s += (s.empty() ? "" : "; ") + part;
  return s.empty() ? "views only" : s;
}

}  // namespace crucible::kernel_synth
