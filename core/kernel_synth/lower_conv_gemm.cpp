// Convolutions and transposed convolutions (1-D to 3-D, one group) as implicit GEMM through
// tl.dot: the product of an (output positions) x (input channels x taps) matrix gathered from the
// input on the fly and the weight seen as (input channels x taps) x (output channels), with the
// epilogue on the tile. Tensor cores do the work on a GPU; no im2col buffer is ever written.
// A strided transposed convolution runs one stride class per program column and gathers only
// that class's taps (byStrideClass), as the channels-last form does for 1-D and 2-D.
#include <sstream>

#include "core/kernel_synth/conv_spec.h"
#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

namespace {

/// The kernel's parameters: the input, weight and bias, the epilogue's operands and outputs,
/// the GEMM's sizes, every stride, and the constexpr shape of the convolution and the tiles.
KernelSignature convGemmSignature(const ConvSpec& s, const FusionGroup& group,
                                  const std::vector<KernelOperand>& ops, const std::string& dom,
                                  const Tiling& t) {
  const int sd = s.spatial, rank = sd + 2;
  KernelSignature sig;
  sig.add("p_x", "_x");
  sig.add("p_w", "_w");
  if (!s.bias.empty()) sig.add("p_bias", "_bias");
  sig.addPointers(ops, group.stores, var);
  sig.add("M", "_M");
  sig.add("C_OUT", dom + "[1]");
  sig.add("C_IN", "_x.shape[1]");
  for (int i = 0; i < sd; ++i) {
    sig.add("O" + s.axis(i), dom + "[" + std::to_string(2 + i) + "]");
    sig.add("I" + s.axis(i), "_x.shape[" + std::to_string(2 + i) + "]");
  }
  for (const char* p : {"x", "w"}) {
    for (int i = 0; i < rank; ++i) sig.params.push_back(std::string(p) + "_s" + std::to_string(i));
  }
  sig.args.push_back("*_x.stride()");
  sig.args.push_back("*_w.stride()");
  if (!s.bias.empty()) sig.add("bias_s", "_bias.stride(0)");
  sig.addStrides(ops, rank);
  sig.addOutputStrides(group.stores, rank);
  sig.constexprs(s.constantNames());
  sig.constexprs({"BLOCK_M", "BLOCK_N", "BLOCK_K"});
  if (t.groupM > 1) sig.constexprs({"GROUP_M"});
  return sig;
}

/// A strided transposed convolution without dilation runs one stride class per program column
/// (grid axis 2): output o = c + S q is reached only through taps k = r + S j, r = (c + P) mod
/// S, so the other taps (7 of 8 in 3-D at stride 2) are never gathered, only to be masked out.
bool byStrideClass(const ConvSpec& s) {
  if (s.kind != ConvSpec::Kind::Transposed) return false;
  bool strided = false;
  for (int i = 0; i < s.spatial; ++i) {
    if (s.dil[i] != 1) return false;
    strided |= s.stride[i] > 1;
  }
  return strided;
}

/// The program's stride class c<axis> and its first tap first_<axis>, then each row's output
/// position o<axis> = c + S q over the class's rows (rows past the output are masked by
/// row_ok), with the batch left in `bi`.
std::string strideClassRows(const ConvSpec& s) {
  std::ostringstream k;
  k << kBody << "cls = tl.program_id(2)\n";
  for (int i = s.spatial - 1; i >= 0; --i) {
    const std::string n = s.axis(i);
    k << kBody << "c" << n << " = cls % S" << n << "\n";
    k << kBody << "cls = cls // S" << n << "\n";
    k << kBody << "first_" << n << " = (c" << n << " + P" << n << ") % S" << n << "\n";
    k << kBody << "T" << n << " = (K" << n << " + S" << n << " - 1) // S" << n << "\n";
  }
  k << kBody << "rem = rm\n";
  std::string ok = "(rm < M)";
  for (int i = s.spatial - 1; i >= 0; --i) {
    const std::string n = s.axis(i), q = "(O" + n + " + S" + n + " - 1) // S" + n;
    k << kBody << "o" << n << " = c" << n << " + (rem % (" << q << ")) * S" << n << "\n";
    k << kBody << "rem = rem // (" << q << ")\n";
    ok += " & (o" + n + " < O" + n + ")";
  }
  k << kBody << "bi = rem\n";
  k << kBody << "row_ok = " << ok << "\n";
  return k.str();
}

/// The K loop: each K index as (input channel, taps), the input tile gathered with the
/// padding's zeros masked in, the weight tile, and their product into `acc`.
void writeConvGemmLoop(std::ostringstream& k, const ConvSpec& s, const Tiling& t) {
  const int sd = s.spatial;
  auto sp = [&](int i) { return s.axis(i); };
  const std::string b2 = std::string(kBody) + kBody;
  k << kBody << "for k0 in range(0, KTOT, BLOCK_K):\n";
  k << b2 << "kk = k0 + tl.arange(0, BLOCK_K)\n";
  k << b2 << "# each K index as (input channel, taps), the last tap fastest, as the weight lies\n";
  k << b2 << "rk = kk\n";
  const bool classed = byStrideClass(s);
  for (int i = sd - 1; i >= 0; --i) {
    if (classed) {  // the class's taps only: first, first + S, ...
      k << b2 << "k" << sp(i) << " = first_" << sp(i) << " + (rk % T" << sp(i) << ") * S" << sp(i)
        << "\n";
      k << b2 << "rk = rk // T" << sp(i) << "\n";
    } else {
      k << b2 << "k" << sp(i) << " = rk % K" << sp(i) << "\n";
      k << b2 << "rk = rk // K" << sp(i) << "\n";
    }
  }
  k << b2 << "ci = rk\n";
  const bool transposed = s.kind == ConvSpec::Kind::Transposed;
  std::string xAddr = "p_x + bi[:, None] * x_s0 + ci[None, :] * x_s1";
  // The weight is (C_out, C_in, k...) for a convolution, (C_in, C_out, k...) when transposed.
  std::string wAddr = transposed ? "p_w + ci[:, None] * w_s0 + rn[None, :] * w_s1"
                                 : "p_w + rn[None, :] * w_s0 + ci[:, None] * w_s1";
  std::string aMask = classed ? "row_ok[:, None] & (kk[None, :] < KTOT)"
                              : "(rm[:, None] < M) & (kk[None, :] < KTOT)";
  std::string bMask = "(kk[:, None] < KTOT) & (rn[None, :] < C_OUT)";
  for (int i = 0; i < sd; ++i) {
    const std::string n = sp(i), d = std::to_string(2 + i);
    if (classed) {
      // The class's taps land on the stride grid: t is a multiple of S by construction.
      k << b2 << "t" << n << " = o" << n << "[:, None] + P" << n << " - k" << n << "[None, :]\n";
      k << b2 << "i" << n << " = t" << n << " // S" << n << "\n";
      aMask += " & (k" + n + "[None, :] < K" + n + ") & (t" + n + " >= 0)";
      bMask += " & (k" + n + "[:, None] < K" + n + ")";
    } else if (transposed) {
      // Output o takes input i where i * S - P + k * D == o: taps off the stride grid are zero.
      k << b2 << "t" << n << " = o" << n << "[:, None] + P" << n << " - k" << n << "[None, :] * D"
        << n << "\n";
      k << b2 << "i" << n << " = t" << n << " // S" << n << "\n";
      aMask += " & (t" + n + " >= 0) & (i" + n + " * S" + n + " == t" + n + ")";
    } else {
      k << b2 << "i" << n << " = o" << n << "[:, None] * S" << n << " - P" << n << " + k" << n
        << "[None, :] * D" << n << "\n";
      aMask += " & (i" + n + " >= 0)";
    }
    aMask += " & (i" + n + " < I" + n + ")";
    xAddr += " + i" + n + " * x_s" + d;
    wAddr += " + k" + n + "[:, None] * w_s" + d;
  }
  k << b2 << "a_tile = tl.load(" << xAddr << ",\n"
    << b2 << "                 mask=" << aMask << ", other=0.0)\n";
  k << b2 << "b_tile = tl.load(" << wAddr << ",\n"
    << b2 << "                 mask=" << bMask << ", other=0.0)\n";
  k << b2 << "acc += " << dotCall(t) << "\n";
}

}  // namespace

std::optional<LoweredGroup> lowerConvGemm(const LoweringInput& in, std::string& why) {
  const auto& [g, group, index, t, host] = in;
  const OpNode& cv = g.nodes[group.nodes.front()];
  const auto spec = convSpec(g, cv, why);
  if (!spec) return std::nullopt;
  const ConvSpec& s = *spec;
  if (!s.gemmApplies()) {
    why = cv.op + ": implicit GEMM covers ungrouped convolutions";
    return std::nullopt;
  }
  const int sd = s.spatial;
  const std::string dom = "_dom" + std::to_string(index);
  auto sp = [&](int i) { return s.axis(i); };

  GroupState st(g, group);
  std::string body = std::string(kBody) + var(cv.name) + " = acc";
  if (!s.bias.empty())
    body += " + tl.load(p_bias + rn * bias_s, mask=rn < C_OUT, other=0.0)[None, :]";
  body += origin(cv);
  if (!lowerEpilogue(g, group, st, broadcastView(host, dom, sd + 2), body, why))
    return std::nullopt;
  const auto ops = st.operands();
  const std::string name = "k" + std::to_string(index) + "_conv_gemm";
  const KernelSignature sig = convGemmSignature(s, group, ops, dom, t);

  std::string taps = "C_IN";
  for (int i = 0; i < sd; ++i) taps += " * K" + sp(i);
  std::ostringstream k;
  k << sig.def(name);
  k << kBody << "# " << nodeList(g, group)
    << " as implicit GEMM: rows are output positions (batch and\n"
    << kBody << "# spatial), columns output channels, K runs over input channels x window taps;\n"
    << kBody
    << "# the input tile is gathered per K step (out-of-range taps are the zero padding).\n";
  k << programOrder(t, "M", "C_OUT");
  k << kBody << "rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n";
  k << kBody << "rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n";
  const bool classed = byStrideClass(s);
  if (classed) {
    k << kBody << "# one stride class per program column: its rows' output positions\n"
      << strideClassRows(s);
    taps = "C_IN";
    for (int i = 0; i < sd; ++i) taps += " * T" + sp(i);
  } else {
    k << kBody << "# each row's output position\n" << s.outputCoordinates("rm");
    k << kBody << "bi = rem\n";
  }
  k << kBody << "KTOT = " << taps << "\n";
  k << kBody << "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n";
  writeConvGemmLoop(k, s, t);
  k << kBody << "mask = " << (classed ? "row_ok[:, None]" : "(rm[:, None] < M)")
    << " & (rn[None, :] < C_OUT)\n";
  std::vector<std::string> coords = {"bi[:, None]", "rn[None, :]"};
  for (int i = 0; i < sd; ++i) coords.push_back("o" + sp(i) + "[:, None]");
  k << loadOperands(g, ops, coords, "mask");
  k << body;
  k << storeOutputs(group.stores, coords, "mask");

  std::ostringstream h;
  h << kHost << "# group " << index << ": " << nodeList(g, group) << " (implicit GEMM)\n";
  h << kHost << dom << " = " << host.shape(cv.shape, cv.altShape) << "\n";
  h << kHost << "_x = " << host.value(s.input) << "\n";
  h << kHost << "_w = " << host.value(s.weight) << "\n";
  if (!s.bias.empty()) h << kHost << "_bias = " << host.value(s.bias) << "\n";
  for (const auto& out : group.stores) h << allocate(g, out, host);
  std::string classes = "1";
  if (classed) {  // the rows of one class: the batch times each dim's ceil(O / S)
    h << kHost << "_M = " << dom << "[0]";
    for (int i = 0; i < sd; ++i)
      h << " * _cdiv(" << dom << "[" << 2 + i << "], " << s.stride[i] << ")";
    h << "\n";
    for (int i = 0; i < sd; ++i) classes += " * " + std::to_string(s.stride[i]);
  } else {
    h << kHost << "_M = _prod(" << dom << ") // " << dom << "[1]\n";
  }
  h << bindOperands(ops);
  h << kHost << "_grid = " << productGrid(t, "_M", dom + "[1]", classes) << "\n";
  h << kHost << name << "[_grid](" << join(sig.args, ", ") << ", " << s.launchConstants()
    << productConstants(t) << launchOptions(t) << ")\n";
  return LoweredGroup{k.str(), h.str(),
                      "group " + std::to_string(index) + " conv [" + nodeList(g, group) +
                          "]: implicit GEMM through tl.dot, epilogue fused, " + productLabel(t)};
}

}  // namespace crucible::kernel_synth
