// Matrix products (linear, matmul, mm, bmm): tl.dot over a K loop, the epilogue applied to the
// accumulator tile before the single store.
#include <algorithm>
#include <sstream>

#include "core/synth/lowering_support.h"

namespace crucible::synth {

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
  const std::string gm = "triton.cdiv(" + m + ", " + std::to_string(t.blockM) + ")";
  const std::string gn = "triton.cdiv(" + n + ", " + std::to_string(t.blockN) + ")";
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

std::optional<LoweredGroup> lowerMatmul(const OpGraph& g, const FusionGroup& group, int index,
                                        const Tiling& t, const HostContext& host,
                                        std::string& why) {
  const OpNode& mm = g.nodes[group.nodes.front()];
  if (mm.inputs.size() < 2 || !mm.inputs[0].isRef() || !mm.inputs[1].isRef()) {
    why = mm.op + " of a constant";
    return std::nullopt;
  }
  const std::string a = mm.inputs[0].ref, b = mm.inputs[1].ref;
  const Shape as = shapeOfValue(g, a), bs = shapeOfValue(g, b);
  const bool linear = mm.op == "linear";
  if (as.size() < 2 && !linear) {
    why = mm.op + " of a vector";
    return std::nullopt;
  }
  // flat: B is one matrix, A's leading dims fold into M; batched: both are stacks of matrices
  // over the same one or two batch dims (attention's (batch, heads)).
  const bool flat = bs.size() == 2;
  const bool batched = !flat && as.size() == bs.size() && (as.size() == 3 || as.size() == 4) &&
                       std::equal(as.begin(), as.end() - 2, bs.begin());
  if (!flat && !batched) {
    why = mm.op + " of shapes with ranks " + std::to_string(as.size()) + " and " +
          std::to_string(bs.size());
    return std::nullopt;
  }
  const std::string dom = "_dom" + std::to_string(index);
  // bf16x3 over parts split beforehand, for fp32 operands; the host falls back to tl.dot's own
  // tf32x3 where an operand's layout is not dense (a slice, a broadcast view).
  const bool split = t.precision == kBf16SplitPrecision && dtypeOf(g, a) == "float32" &&
                     dtypeOf(g, b) == "float32";
  GroupState st(g, group);
  std::string bias = "None";
  if (linear && mm.inputs.size() > 2 && mm.inputs[2].isRef()) bias = mm.inputs[2].ref;
  std::string body = std::string(kBody) + var(mm.name) + " = acc";
  if (bias != "None") body += " + tl.load(bias + rn * bias_s, mask=rn < N, other=0.0)[None, :]";
  body += origin(mm);
  // Operands of the epilogue, broadcast to the output and seen as the kernel's 3-d index space.
  auto epilogueView = [&](const std::string& ref) {
    std::string v = broadcastTo(host, ref, dom);
    if (flat) v += ".reshape(-1, " + dom + "[-1])";
    return v;
  };
  if (!lowerEpilogue(g, group, st, epilogueView, body, why)) return std::nullopt;
  const auto ops = st.operands();
  const std::string name = "k" + std::to_string(index) + "_matmul";
  KernelSignature sig;
  sig.add("a", "_a");
  sig.add("b", "_b");
  if (split) {
    sig.add("a_lo", "_a_lo");
    sig.add("b_lo", "_b_lo");
  }
  if (bias != "None") sig.add("bias", "_bias");
  sig.addPointers(ops, group.stores, [](const std::string& s) { return "_o_" + s; });
  for (const char* p :
       {"M", "N", "K", "B1", "a_sb0", "a_sb1", "a_sm", "a_sk", "b_sb0", "b_sb1", "b_sk", "b_sn"})
    sig.params.push_back(p);
  sig.args.insert(sig.args.end(), {"_M", "_N", "_K", "_B1", "*_strides4(_a)", "*_strides4(_b)"});
  if (bias != "None") sig.add("bias_s", "_bias.stride(0)");
  auto tileStrides = [&](const std::string& p, const std::string& hostName) {
    for (const char* s : {"_sb0", "_sb1", "_sm", "_sn"}) sig.params.push_back(p + s);
    sig.args.push_back("*_strides4(" + hostName + ")");
  };
  for (const auto& o : ops) tileStrides(o.arg, "_" + o.arg);
  for (const auto& s : group.stores) tileStrides("out_" + s, "_o_" + s);
  sig.constexprs({"BLOCK_M", "BLOCK_N", "BLOCK_K"});
  if (t.groupM > 1) sig.constexprs({"GROUP_M"});
  if (split) sig.constexprs({"SPLIT"});

  auto tile = [](const std::string& p, const std::string& pointer) {
    return pointer + " + b0 * " + p + "_sb0 + b1 * " + p + "_sb1 + rm[:, None] * " + p +
           "_sm + rn[None, :] * " + p + "_sn";
  };
  const std::string b2 = std::string(kBody) + kBody;
  std::ostringstream k;
  if (split) k << splitKernel("k" + std::to_string(index) + "_split");
  k << sig.def(name);
  k << kBody << "# " << nodeList(g, group)
    << ": a BLOCK_M x BLOCK_N tile of the product per program, accumulated in fp32 over K,\n"
    << kBody << "# then the epilogue on the tile before the single store.\n";
  k << programOrder(t, "M", "N");
  k << kBody << "# the matrix of the batch: (b0, b1) over up to two batch dims\n";
  k << kBody << "pid_b = tl.program_id(2)\n";
  k << kBody << "b0 = pid_b // B1\n" << kBody << "b1 = pid_b % B1\n";
  k << kBody << "rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n";
  k << kBody << "rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n";
  k << kBody << "rk = tl.arange(0, BLOCK_K)\n";
  k << kBody << "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n";
  k << kBody << "for k0 in range(0, K, BLOCK_K):\n";
  k << b2 << "kk = k0 + rk\n";
  k << b2 << "a_at = b0 * a_sb0 + b1 * a_sb1 + rm[:, None] * a_sm + kk[None, :] * a_sk\n"
    << b2 << "a_ok = (rm[:, None] < M) & (kk[None, :] < K)\n"
    << b2 << "b_at = b0 * b_sb0 + b1 * b_sb1 + kk[:, None] * b_sk + rn[None, :] * b_sn\n"
    << b2 << "b_ok = (kk[:, None] < K) & (rn[None, :] < N)\n"
    << b2 << "a_tile = tl.load(a + a_at, mask=a_ok, other=0.0)\n"
    << b2 << "b_tile = tl.load(b + b_at, mask=b_ok, other=0.0)\n";
  if (split) {
    const std::string b3 = b2 + kBody;
    k << b2 << "if SPLIT:\n"
      << b3 << "# bf16x3's products over the split parts: the two small ones, then hi x hi\n"
      << b3 << "a_lo_tile = tl.load(a_lo + a_at, mask=a_ok, other=0.0)\n"
      << b3 << "b_lo_tile = tl.load(b_lo + b_at, mask=b_ok, other=0.0)\n"
      << b3 << "acc = tl.dot(a_lo_tile, b_tile, acc)\n"
      << b3 << "acc = tl.dot(a_tile, b_lo_tile, acc)\n"
      << b3 << "acc = tl.dot(a_tile, b_tile, acc)\n"
      << b2 << "else:\n"
      << b3 << "acc += " << dotCall(t) << "\n";
  } else {
    k << b2 << "acc += " << dotCall(t) << "\n";
  }
  k << kBody << "mask = (rm[:, None] < M) & (rn[None, :] < N)\n";
  for (const auto& o : ops) {
    k << kBody << o.arg << " = tl.load(" << tile(o.arg, "p_" + o.arg) << ", mask=mask, other=0.0)"
      << widen(dtypeOf(g, o.value)) << "\n";
  }
  k << body;
  for (const auto& s : group.stores) {
    k << kBody << "tl.store(" << tile("out_" + s, "out_" + s) << ", " << var(s) << ", mask=mask)\n";
  }

  std::ostringstream h;
  h << kHost << "# group " << index << ": " << nodeList(g, group) << " (tl.dot, fused epilogue)\n";
  h << kHost << dom << " = " << host.shape(mm.shape, mm.altShape) << "\n";
  const std::string av = host.value(a), bv = host.value(b);
  if (flat) {
    h << kHost << "_a = " << av << ".reshape(-1, " << av << ".shape[-1])\n";
    h << kHost << "_b = " << bv << (linear ? ".t()" : "") << "\n";
  } else {
    h << kHost << "_a = " << av << "\n" << kHost << "_b = " << bv << "\n";
  }
  if (bias != "None") h << kHost << "_bias = " << host.value(bias) << "\n";
  if (split) {
    const std::string kernel = "k" + std::to_string(index) + "_split";
    const std::string h2 = std::string(kHost) + kBody;
    h << kHost << "# the operands as bfloat16 parts hi and lo, each in its operand's own layout\n"
      << kHost << "_split = _dense(_a) and _dense(_b)\n"
      << kHost << "_a_lo, _b_lo = _a, _b\n"
      << kHost << "if _split:\n";
    for (const char* v : {"_a", "_b"}) {
      const std::string x = v;
      h << h2 << x << "_hi = torch.empty_strided(" << x << ".shape, " << x
        << ".stride(), device=" << x << ".device, dtype=torch.bfloat16)\n"
        << h2 << x << "_lo = torch.empty_like(" << x << "_hi)\n"
        << h2 << kernel << "[(triton.cdiv(" << x << ".numel(), 1024),)](" << x << ", " << x
        << "_hi, " << x << "_lo, " << x << ".numel(), BLOCK=1024)\n";
    }
    h << h2 << "_a, _b = _a_hi, _b_hi\n";
  }
  h << kHost << "_M, _K, _N = _a.shape[-2], _a.shape[-1], _b.shape[-1]\n";
  h << kHost << "_B1 = " << (as.size() == 4 && batched ? "_a.shape[1]" : "1") << "\n";
  for (const auto& s : group.stores) {
    h << allocate(g, s, host);
    h << kHost << "_o_" << s << " = " << var(s) << (flat ? ".view(-1, _N)" : "") << "\n";
  }
  h << bindOperands(ops);
  h << kHost << "_grid = " << productGrid(t, "_M", "_N", batched ? "_prod(_a.shape[:-2])" : "1")
    << "\n";
  // shared memory per element of both tiles: two bfloat16 parts when split, as many bytes as
  // the one fp32 value of the unsplit fallback; else one value
  const int elementBytes =
      split ? 4 : std::max(dtypeBytes(dtypeOf(g, a)), dtypeBytes(dtypeOf(g, b)));
  h << kHost << name << "[_grid](" << join(sig.args, ", ") << productConstants(t)
    << (split ? ", SPLIT=_split" : "") << pipelinedLaunchOptions(t, elementBytes, "_a.device")
    << ")\n";
  return LoweredGroup{k.str(), h.str(),
                      "group " + std::to_string(index) + " matmul [" + nodeList(g, group) +
                          "]: tl.dot with a K loop and the epilogue fused, " + productLabel(t)};
}

}  // namespace crucible::synth
