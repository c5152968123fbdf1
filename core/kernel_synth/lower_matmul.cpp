// Matrix products (linear, matmul, mm, bmm): tl.dot over a K loop, the epilogue applied to the
// accumulator tile before the single store.
#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

namespace {
/// Products over a longer K accumulate chunk by chunk (matmulKernel).
constexpr std::int64_t kChunkedK = 4096;
/// A long-K product with fewer output tiles than this leaves most of a GPU idle while each
/// program walks all of K: its K is split over programs (split-K) where the tile fits the shape.
constexpr std::int64_t kFewTiles = 32;
/// How many programs split-K aims at: a couple per multiprocessor of a large GPU.
constexpr std::int64_t kSplitKPrograms = 264;

/// The chunk a long K is summed in: about sqrt(K), a whole number of BLOCK_K.
std::int64_t chunkOf(std::int64_t depth, int blockK) {
  return std::max<std::int64_t>(1, std::llround(std::sqrt(static_cast<double>(depth)) / blockK)) *
         blockK;
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}
}  // namespace

std::string dotCall(const Tiling& t) {
  // ieee: full fp32 products (plain TF32 would miss a 1e-4 tolerance on GPUs); tf32x3 splits
  // each operand into two TF32 halves and keeps about fp32's accuracy on tensor cores. A form
  // whose operands are not split beforehand takes the split precisions as tf32x3.
  const bool split = t.precision == kSplitPrecision || t.precision == kBf16SplitPrecision;
  const std::string precision = split ? "tf32x3" : t.precision;
  return "tl.dot(a_tile, b_tile, input_precision=\"" + precision + "\")";
}

namespace {

/// A kernel splitting a dense fp32 tensor, storage order, into bfloat16 hi and lo parts.
std::string splitKernel(const std::string& name) {
  std::ostringstream k;
  k << "@triton.jit\n"
    << "def " << name << "(src, hi_p, lo_p, n, BLOCK: tl.constexpr):\n"
    << kBody << "# a dense tensor's storage, element by element\n"
    << kBody << "at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    << kBody << "ok = at < n\n"
    << kBody << "v = tl.load(src + at, mask=ok)\n"
    << bf16SplitLines("hi_p", "lo_p", "ok") << "\n\n";
  return k.str();
}

}  // namespace

std::string programOrder(const Tiling& t, const std::string& m, const std::string& n) {
  std::string s;
  if (t.groupM <= 1) {
    s += std::string(kBody) + "pid_m = tl.program_id(0)\n";
    s += std::string(kBody) + "pid_n = tl.program_id(1)\n";
    return s;
  }
  // GROUP_M row tiles are visited together, so the B tiles they share stay in L2.
  s += std::string(kBody) +
       "# programs walk GROUP_M row tiles at a time so they share B tiles in L2\n";
  s += std::string(kBody) + "pid = tl.program_id(0)\n";
  s += std::string(kBody) + "grid_m = tl.cdiv(" + m + ", BLOCK_M)\n";
  s += std::string(kBody) + "grid_n = tl.cdiv(" + n + ", BLOCK_N)\n";
  s += std::string(kBody) + "width = GROUP_M * grid_n\n";
  s += std::string(kBody) + "first_m = (pid // width) * GROUP_M\n";
  s += std::string(kBody) + "size_m = tl.minimum(grid_m - first_m, GROUP_M)\n";
  s += std::string(kBody) + "pid_m = first_m + (pid % width) % size_m\n";
  s += std::string(kBody) + "pid_n = (pid % width) // size_m\n";
  return s;
}

std::string productGrid(const Tiling& t, const std::string& m, const std::string& n,
                        const std::string& batch) {
  const std::string gm = "_cdiv(" + m + ", " + std::to_string(t.blockM) + ")";
  const std::string gn = "_cdiv(" + n + ", " + std::to_string(t.blockN) + ")";
  if (t.groupM <= 1) return "(" + gm + ", " + gn + ", " + batch + ")";
  return "(" + gm + " * " + gn + ", 1, " + batch + ")";
}

std::string productConstants(const Tiling& t) {
  return ", BLOCK_M=" + std::to_string(t.blockM) + ", BLOCK_N=" + std::to_string(t.blockN) +
         ", BLOCK_K=" + std::to_string(t.blockK) +
         (t.groupM > 1 ? ", GROUP_M=" + std::to_string(t.groupM) : "");
}

std::string productLabel(const Tiling& t) {
  return "BLOCK_M=" + std::to_string(t.blockM) + " BLOCK_N=" + std::to_string(t.blockN) +
         " BLOCK_K=" + std::to_string(t.blockK) + ", warps=" + std::to_string(t.warps) +
         (t.stages ? ", stages=" + std::to_string(t.stages) : "") +
         (t.groupM > 1 ? ", GROUP_M=" + std::to_string(t.groupM) : "") + ", " + t.precision;
}

namespace {

/// A large GPU's multiprocessors (today's largest data-centre GPUs have 132): the synthesizer
/// writes one tiling per candidate without asking the device, so it fills this many.
constexpr std::int64_t kMultiprocessors = 132;
/// The share of its last wave of programs a tiling must fill to be kept as written.
constexpr double kLeastWaveUse = 0.75;

/// With fewer columns than BLOCK_N, the tile narrowed to them, the width it gives up going to
/// BLOCK_M where `widen` and rows allow (fitProductTile).
Tiling narrowedToColumns(Tiling t, std::int64_t rows, std::int64_t columns, bool widen) {
  // tl.dot takes no dimension under 16; a GPU wants a few programs per multiprocessor.
  constexpr int kLeastDotSide = 16, kWidestM = 256;
  constexpr std::int64_t kProgramsWanted = 256;
  if (columns >= t.blockN) return t;
  int n = kLeastDotSide;
  while (n < columns) n *= 2;
  if (n >= t.blockN) return t;
  int m = t.blockM;
  for (int wider = m * 2; widen && wider <= kWidestM && wider / t.blockM <= t.blockN / n &&
                          rows >= static_cast<std::int64_t>(wider) * kProgramsWanted;
       wider *= 2)
    m = wider;
  t.blockM = m;
  t.blockN = n;
  return t;
}

/// A wide tile (128 x 128 or more) whose programs leave much of a GPU's last wave idle (fewer
/// tiles than multiprocessors, or 1.5 waves) becomes 64 x 64 with 4 warps: four times the
/// programs. Their K step is 64 over a long K, and 32 over a short one, where the deeper step
/// lost to 128 x 128. On a large GPU this beats 128 x 128 on each of level 2's products that
/// 128 x 128 leaves idle and comes close to the best of the tilings and split-K forms the study
/// tried; tiles that fill their waves stay as written, where 128 x 128 is about the best
/// (docs/studies/product_tile_study.py; figures in docs/PERFORMANCE.md).
Tiling filledToMultiprocessors(Tiling t, std::int64_t rows, std::int64_t columns,
                               std::int64_t depth) {
  constexpr int kWide = 128, kSmall = 64;
  constexpr std::int64_t kDeep = 2048;
  if (t.blockM < kWide || t.blockN < kWide) return t;
  const std::int64_t tiles =
      ((rows + t.blockM - 1) / t.blockM) * ((columns + t.blockN - 1) / t.blockN);
  const std::int64_t waves = (tiles + kMultiprocessors - 1) / kMultiprocessors;
  if (static_cast<double>(tiles) >= kLeastWaveUse * static_cast<double>(waves * kMultiprocessors))
    return t;
  t.blockM = kSmall;
  t.blockN = kSmall;
  t.blockK = depth >= kDeep ? kSmall : kSmall / 2;
  t.warps = 4;
  return t;
}

}  // namespace

Tiling fitProductTile(Tiling t, std::int64_t rows, std::int64_t columns, bool widen) {
  if (!t.fitToShape || columns <= 0 || rows <= 0) return t;
  return narrowedToColumns(t, rows, columns, widen);
}

namespace {

/// What the lowering of a matrix product decides before it writes any text.
struct MatmulPlan : GroupLowering {
  using GroupLowering::GroupLowering;
  std::string a, b;  // the operands' values
  Shape as, bs;
  bool linear = false;
  bool flat = false;     // B is one matrix, A's leading dims fold into M
  bool batched = false;  // both are stacks of matrices over the same one or two batch dims
  bool split = false;    // bf16x3 over parts split beforehand
  std::string bias = "None";
  std::string dom, name;
  std::string body;  // the accumulator's statement and the epilogue
  std::vector<KernelOperand> ops;
  KernelSignature sig;
  // split-K: `splitsK` programs per output tile each sum `span` of K (in chunks of `chunk`)
  // into a partial, and the product's kernel adds the partials in order before its epilogue
  std::int64_t splitsK = 0, span = 0, chunk = 0;
  KernelSignature partSig;
};

/// The output's rows (every dim but the last folded) and columns.
std::pair<std::int64_t, std::int64_t> rowsAndColumns(const Shape& out) {
  if (out.empty()) return {0, 0};
  std::int64_t rows = 1;
  for (auto d : out) rows *= d;
  return {out.back() > 0 ? rows / out.back() : 0, out.back()};
}

/// Whether a product of `out` over `depth` with tile `t` splits its K (planSplitK): a long K
/// over few output tiles, on a GPU, where B is one matrix.
bool splitsItsK(const Tiling& t, const Shape& out, std::int64_t depth, bool flat) {
  const auto [rows, columns] = rowsAndColumns(out);
  if (!t.fitToShape || !flat || depth <= kChunkedK || rows <= 0 || columns <= 0) return false;
  return ceilDiv(rows, t.blockM) * ceilDiv(columns, t.blockN) < kFewTiles;
}

/// Split-K for a long K over few output tiles, where the tile fits the shape (GPUs): as many
/// splits as bring the programs to about kSplitKPrograms, each a whole number of chunks.
void planSplitK(MatmulPlan& p) {
  const std::int64_t depth = p.as.empty() ? 0 : p.as.back();
  if (!splitsItsK(p.t, p.head.shape, depth, p.flat)) return;
  const auto [rows, columns] = rowsAndColumns(p.head.shape);
  const std::int64_t tiles = ceilDiv(rows, p.t.blockM) * ceilDiv(columns, p.t.blockN);
  p.chunk = chunkOf(depth, p.t.blockK);
  const std::int64_t splits = std::min(ceilDiv(depth, p.chunk), ceilDiv(kSplitKPrograms, tiles));
  p.span = ceilDiv(ceilDiv(depth, splits), p.chunk) * p.chunk;
  p.splitsK = ceilDiv(depth, p.span);
  if (p.splitsK < 2) p.splitsK = 0;
}

/// The product's tiling on a GPU: a wide tile that leaves much of the last wave of programs idle
/// is made smaller (filledToMultiprocessors), unless split-K fills the GPU instead.
Tiling productTiling(const LoweringInput& in) {
  const OpNode& mm = in.g.nodes[in.group.nodes.front()];
  if (!in.t.fitToShape || mm.inputs.size() < 2 || !mm.inputs[0].isRef() || !mm.inputs[1].isRef())
    return in.t;
  const Shape as = shapeOfValue(in.g, mm.inputs[0].ref);
  const bool flat = shapeOfValue(in.g, mm.inputs[1].ref).size() == 2;
  if (as.empty() || splitsItsK(in.t, mm.shape, as.back(), flat)) return in.t;
  const auto [rows, columns] = rowsAndColumns(mm.shape);
  return rows > 0 && columns > 0 ? filledToMultiprocessors(in.t, rows, columns, as.back()) : in.t;
}

/// The operands' shapes and the epilogue; false with `why` where the product cannot be lowered.
bool planMatmul(MatmulPlan& p, std::string& why) {
  const OpNode& mm = p.head;
  if (mm.inputs.size() < 2 || !mm.inputs[0].isRef() || !mm.inputs[1].isRef()) {
    why = mm.op + " of a constant";
    return false;
  }
  p.a = mm.inputs[0].ref;
  p.b = mm.inputs[1].ref;
  p.as = shapeOfValue(p.g, p.a);
  p.bs = shapeOfValue(p.g, p.b);
  p.linear = mm.op == "linear";
  const Shape &as = p.as, &bs = p.bs;
  if (as.size() < 2 && !p.linear) {
    why = mm.op + " of a vector";
    return false;
  }
  // flat: B is one matrix, A's leading dims fold into M; batched: both are stacks of matrices
  // over the same one or two batch dims (attention's (batch, heads)).
  p.flat = bs.size() == 2;
  p.batched = !p.flat && as.size() == bs.size() && (as.size() == 3 || as.size() == 4) &&
              std::equal(as.begin(), as.end() - 2, bs.begin());
  if (!p.flat && !p.batched) {
    why = mm.op + " of shapes with ranks " + std::to_string(as.size()) + " and " +
          std::to_string(bs.size());
    return false;
  }
  p.dom = "_dom" + std::to_string(p.index);
  // bf16x3 over parts split beforehand, for fp32 operands; the host falls back to tl.dot's own
  // tf32x3 where an operand's layout is not dense (a slice, a broadcast view).
  p.split = p.t.precision == kBf16SplitPrecision && dtypeOf(p.g, p.a) == "float32" &&
            dtypeOf(p.g, p.b) == "float32";
  if (p.linear && mm.inputs.size() > 2 && mm.inputs[2].isRef()) p.bias = mm.inputs[2].ref;
  p.body = std::string(kBody) + var(mm.name) + " = acc";
  if (p.bias != "None") p.body += " + tl.load(bias + rn * bias_s, mask=rn < N, other=0.0)[None, :]";
  p.body += origin(mm);
  // Operands of the epilogue, broadcast to the output and seen as the kernel's 3-d index space.
  const int rank = static_cast<int>(p.head.shape.size());
  auto epilogueView = [&](const std::string& ref, bool channel) {
    std::string v =
        channel ? channelView(p.host, ref, rank, p.dom) : broadcastTo(p.host, ref, p.dom);
    if (p.flat) v += ".reshape(-1, " + p.dom + "[-1])";
    return v;
  };
  if (!lowerEpilogue(p.g, p.group, p.st, epilogueView, p.body, why)) return false;
  p.ops = p.st.operands();
  p.name = "k" + std::to_string(p.index) + "_matmul";
  planSplitK(p);
  return true;
}

/// The operands a, b (and their bfloat16 lo parts when split) and, after `between`, the sizes
/// and the operands' strides: what both of split-K's kernels and the product's take alike.
void signOperands(const MatmulPlan& p, KernelSignature& sig, const std::function<void()>& between) {
  sig.add("a", "_a");
  sig.add("b", "_b");
  if (p.split) {
    sig.add("a_lo", "_a_lo");
    sig.add("b_lo", "_b_lo");
  }
  between();
  for (const char* param :
       {"M", "N", "K", "B1", "a_sb0", "a_sb1", "a_sm", "a_sk", "b_sb0", "b_sb1", "b_sk", "b_sn"})
    sig.params.push_back(param);
  sig.args.insert(sig.args.end(), {"_M", "_N", "_K", "_B1", "*_strides4(_a)", "*_strides4(_b)"});
}

/// BLOCK_M, BLOCK_N, BLOCK_K and the constexprs the tiling adds.
void signTiles(const MatmulPlan& p, KernelSignature& sig) {
  sig.constexprs({"BLOCK_M", "BLOCK_N", "BLOCK_K"});
  if (p.t.groupM > 1) sig.constexprs({"GROUP_M"});
  if (p.split) sig.constexprs({"SPLIT"});
}

/// The kernels' parameters and the launches' arguments.
void signMatmul(MatmulPlan& p) {
  KernelSignature& sig = p.sig;
  signOperands(p, sig, [&] {
    if (p.bias != "None") sig.add("bias", "_bias");
    sig.addPointers(p.ops, p.group.stores, [](const std::string& s) { return "_o_" + s; });
  });
  if (p.bias != "None") sig.add("bias_s", "_bias.stride(0)");
  auto tileStrides = [&](const std::string& param, const std::string& hostName) {
    for (const char* s : {"_sb0", "_sb1", "_sm", "_sn"}) sig.params.push_back(param + s);
    sig.args.push_back("*_strides4(" + hostName + ")");
  };
  for (const auto& o : p.ops) tileStrides(o.arg, "_" + o.arg);
  for (const auto& s : p.group.stores) tileStrides("out_" + s, "_o_" + s);
  if (p.splitsK) sig.add("partials", "_part");
  signTiles(p, sig);
  if (!p.splitsK) return;
  sig.constexprs({"SPLITS"});
  // Split-K's first kernel: the operands, the partials, the sizes and the operands' strides.
  signOperands(p, p.partSig, [&] { p.partSig.add("partials", "_part"); });
  signTiles(p, p.partSig);
  p.partSig.constexprs({"SPAN", "CHUNK"});
}

/// The tile of a 4-d-strided tensor at (b0, b1, rm, rn).
std::string tileAt(const std::string& p, const std::string& pointer) {
  return pointer + " + b0 * " + p + "_sb0 + b1 * " + p + "_sb1 + rm[:, None] * " + p +
         "_sm + rn[None, :] * " + p + "_sn";
}

/// The K loop's body: the operand tiles loaded and their product accumulated into `acc`, at
/// `b2`'s depth.
std::string matmulKStep(const MatmulPlan& p, const std::string& acc, const std::string& b2) {
  std::ostringstream k;
  k << b2 << "kk = k0 + rk\n";
  k << b2 << "a_at = b0 * a_sb0 + b1 * a_sb1 + rm[:, None] * a_sm + kk[None, :] * a_sk\n"
    << b2 << "a_ok = (rm[:, None] < M) & (kk[None, :] < K)\n"
    << b2 << "b_at = b0 * b_sb0 + b1 * b_sb1 + kk[:, None] * b_sk + rn[None, :] * b_sn\n"
    << b2 << "b_ok = (kk[:, None] < K) & (rn[None, :] < N)\n"
    << b2 << "a_tile = tl.load(a + a_at, mask=a_ok, other=0.0)\n"
    << b2 << "b_tile = tl.load(b + b_at, mask=b_ok, other=0.0)\n";
  if (p.split) {
    const std::string b3 = b2 + kBody;
    k << b2 << "if SPLIT:\n"
      << b3 << "# bf16x3's products over the split parts: the two small ones, then hi x hi\n"
      << b3 << "a_lo_tile = tl.load(a_lo + a_at, mask=a_ok, other=0.0)\n"
      << b3 << "b_lo_tile = tl.load(b_lo + b_at, mask=b_ok, other=0.0)\n"
      << b3 << acc << " = tl.dot(a_lo_tile, b_tile, " << acc << ")\n"
      << b3 << acc << " = tl.dot(a_tile, b_lo_tile, " << acc << ")\n"
      << b3 << acc << " = tl.dot(a_tile, b_tile, " << acc << ")\n"
      << b2 << "else:\n"
      << b3 << acc << " += " << dotCall(p.t) << "\n";
  } else {
    k << b2 << acc << " += " << dotCall(p.t) << "\n";
  }
  return k.str();
}

/// The tile's coordinates (rm, rn, rk) and a zero accumulator, after the program order.
std::string tileStart() {
  std::ostringstream k;
  k << kBody << "rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n";
  k << kBody << "rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n";
  k << kBody << "rk = tl.arange(0, BLOCK_K)\n";
  k << kBody << "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n";
  return k.str();
}

/// Where partial `s` of the tile lies in the (splits, M, N) partials.
std::string partialAt(const std::string& s) {
  return "partials + (" + s + " * M + rm[:, None]) * N + rn[None, :]";
}

/// Split-K's first kernel: one program per (tile, split) sums its SPAN of K in chunks and
/// stores the partial.
std::string partialKernel(const MatmulPlan& p) {
  std::ostringstream k;
  const std::string b2 = std::string(kBody) + kBody, b3 = b2 + kBody;
  k << p.partSig.def(p.name + "_part");
  k << kBody << "# split-K: this program's SPAN of K for one tile of the product, summed in\n"
    << kBody << "# chunks of CHUNK, stored as a partial the product's kernel adds in order\n";
  k << programOrder(p.t, "M", "N");
  k << kBody << "pid_s = tl.program_id(2)\n";
  k << kBody << "b0 = 0\n" << kBody << "b1 = 0\n";
  k << tileStart();
  k << kBody << "for kc in range(pid_s * SPAN, pid_s * SPAN + SPAN, CHUNK):\n";
  k << b2 << "chunk_sum = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n";
  k << b2 << "for k0 in range(kc, kc + CHUNK, BLOCK_K):\n";
  k << matmulKStep(p, "chunk_sum", b3);
  k << b2 << "acc += chunk_sum\n";
  k << kBody << "mask = (rm[:, None] < M) & (rn[None, :] < N)\n";
  k << kBody << "tl.store(" << partialAt("pid_s") << ", acc, mask=mask)\n\n\n";
  return k.str();
}

std::string matmulKernel(const MatmulPlan& p) {
  const OpGraph& g = p.g;
  std::ostringstream k;
  if (p.split) k << splitKernel("k" + std::to_string(p.index) + "_split");
  if (p.splitsK) k << partialKernel(p);
  k << p.sig.def(p.name);
  k << kBody << "# " << nodeList(g, p.group)
    << ": a BLOCK_M x BLOCK_N tile of the product per program, accumulated in fp32 over K,\n"
    << kBody << "# then the epilogue on the tile before the single store.\n";
  k << programOrder(p.t, "M", "N");
  k << kBody << "# the matrix of the batch: (b0, b1) over up to two batch dims\n";
  k << kBody << "pid_b = tl.program_id(2)\n";
  k << kBody << "b0 = pid_b // B1\n" << kBody << "b1 = pid_b % B1\n";
  k << tileStart();
  const std::int64_t depth = p.as.empty() ? 0 : p.as.back();
  const std::string b2 = std::string(kBody) + kBody;
  if (p.splitsK) {
    k << kBody << "# the partials of the K splits, added in order\n";
    k << kBody << "for s in range(SPLITS):\n";
    k << b2 << "acc += tl.load(" << partialAt("s")
      << ", mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)\n";
  } else if (depth > kChunkedK) {
    // A long K in fp32 one tile after another loses about K roundings' worth; sums of chunks of
    // about sqrt(K), added up in turn, lose about 2 sqrt(K), as libraries' blocked sums do.
    const std::int64_t chunk = chunkOf(depth, p.t.blockK);
    k << kBody << "for kc in range(0, K, " << chunk << "):\n";
    k << b2 << "part = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n";
    k << b2 << "for k0 in range(kc, kc + " << chunk << ", BLOCK_K):\n";
    k << matmulKStep(p, "part", b2 + kBody);
    k << b2 << "acc += part\n";
  } else {
    k << kBody << "for k0 in range(0, K, BLOCK_K):\n";
    k << matmulKStep(p, "acc", b2);
  }
  k << kBody << "mask = (rm[:, None] < M) & (rn[None, :] < N)\n";
  for (const auto& o : p.ops) {
    k << kBody << o.arg << " = tl.load(" << tileAt(o.arg, "p_" + o.arg) << ", mask=mask, other=0.0)"
      << widen(dtypeOf(g, o.value)) << "\n";
  }
  k << p.body;
  for (const auto& s : p.group.stores) {
    k << kBody << "tl.store(" << tileAt("out_" + s, "out_" + s) << ", " << var(s)
      << ", mask=mask)\n";
  }
  return k.str();
}

/// The host lines splitting both operands into bfloat16 parts, where their layouts are dense.
std::string splitOperands(const MatmulPlan& p) {
  const std::string kernel = "k" + std::to_string(p.index) + "_split";
  const std::string h2 = std::string(kHost) + kBody;
  std::ostringstream h;
  h << kHost << "# the operands as bfloat16 parts hi and lo, each in its operand's own layout\n"
    << kHost << "_split = _dense(_a) and _dense(_b)\n"
    << kHost << "_a_lo, _b_lo = _a, _b\n"
    << kHost << "if _split:\n";
  for (const char* v : {"_a", "_b"}) {
    const std::string x = v;
    h << h2 << x << "_hi = torch.empty_strided(" << x << ".shape, " << x
      << ".stride(), device=" << x << ".device, dtype=torch.bfloat16)\n"
      << h2 << x << "_lo = torch.empty_like(" << x << "_hi)\n"
      << h2 << kernel << "[(_cdiv(" << x << ".numel(), 1024),)](" << x << ", " << x << "_hi, " << x
      << "_lo, " << x << ".numel(), BLOCK=1024)\n";
  }
  h << h2 << "_a, _b = _a_hi, _b_hi\n";
  return h.str();
}

std::string matmulHost(const MatmulPlan& p) {
  const OpGraph& g = p.g;
  const HostContext& host = p.host;
  std::ostringstream h;
  h << kHost << "# group " << p.index << ": " << nodeList(g, p.group)
    << " (tl.dot, fused epilogue)\n";
  h << kHost << p.dom << " = " << host.shape(p.head.shape, p.head.altShape) << "\n";
  const std::string av = host.value(p.a), bv = host.value(p.b);
  if (p.flat) {
    h << kHost << "_a = " << av << ".reshape(-1, " << av << ".shape[-1])\n";
    h << kHost << "_b = " << bv << (p.linear ? ".t()" : "") << "\n";
  } else {
    h << kHost << "_a = " << av << "\n" << kHost << "_b = " << bv << "\n";
  }
  if (p.bias != "None") h << kHost << "_bias = " << host.value(p.bias) << "\n";
  if (p.split) h << splitOperands(p);
  h << kHost << "_M, _K, _N = _a.shape[-2], _a.shape[-1], _b.shape[-1]\n";
  h << kHost << "_B1 = " << (p.as.size() == 4 && p.batched ? "_a.shape[1]" : "1") << "\n";
  for (const auto& s : p.group.stores) {
    h << allocate(g, s, host);
    h << kHost << "_o_" << s << " = " << var(s) << (p.flat ? ".view(-1, _N)" : "") << "\n";
  }
  h << bindOperands(p.ops);
  // shared memory per element of both tiles: two bfloat16 parts when split, as many bytes as
  // the one fp32 value of the unsplit fallback; else one value
  const int elementBytes =
      p.split ? 4 : std::max(dtypeBytes(dtypeOf(g, p.a)), dtypeBytes(dtypeOf(g, p.b)));
  const std::string splitFlag = p.split ? ", SPLIT=_split" : "";
  if (p.splitsK) {
    // The splits follow the K this call has: SPAN was planned from the traced K, and a call
    // with another K is still summed whole.
    h << kHost << "# split-K: about " << p.splitsK << " programs per tile, " << p.span
      << " of K each, their partials added in order by the product's kernel\n";
    h << kHost << "_splits = _cdiv(_K, " << p.span << ")\n";
    h << kHost << "_part = torch.empty((_splits, _M, _N), device=_a.device, "
      << "dtype=torch.float32)\n";
    h << kHost << p.name << "_part[" << productGrid(p.t, "_M", "_N", "_splits") << "]("
      << join(p.partSig.args, ", ") << productConstants(p.t) << splitFlag << ", SPAN=" << p.span
      << ", CHUNK=" << p.chunk << pipelinedLaunchOptions(p.t, elementBytes, "_a.device") << ")\n";
  }
  h << kHost << "_grid = " << productGrid(p.t, "_M", "_N", p.batched ? "_prod(_a.shape[:-2])" : "1")
    << "\n";
  h << kHost << p.name << "[_grid](" << join(p.sig.args, ", ") << productConstants(p.t) << splitFlag
    << (p.splitsK ? ", SPLITS=_splits" : "")
    << pipelinedLaunchOptions(p.t, elementBytes, "_a.device") << ")\n";
  return h.str();
}

}  // namespace

std::optional<LoweredGroup> lowerMatmul(const LoweringInput& given, std::string& why) {
  const Tiling tiling = productTiling(given);
  const LoweringInput in{given.g, given.group, given.index, tiling, given.host};
  MatmulPlan p(in);
  if (!planMatmul(p, why)) return std::nullopt;
  signMatmul(p);
  return LoweredGroup{matmulKernel(p), matmulHost(p),
                      "group " + std::to_string(in.index) + " matmul [" + nodeList(in.g, in.group) +
                          "]: tl.dot with a K loop and the epilogue fused, " + productLabel(in.t)};
}

}  // namespace crucible::kernel_synth
