// Convolutions, transposed convolutions and pooling (1-D and 2-D) as direct loops: one output
// element per lane, a loop over the input channels of its group and the window's taps, the
// epilogue applied before the store. The form every backend runs well on a CPU; GPUs also get
// the implicit GEMM of lower_conv_gemm.cpp.
#include <cstdint>
#include <sstream>
#include <vector>

#include "core/kernel_synth/conv_spec.h"
#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

namespace {

using Kind = ConvSpec::Kind;

/// The most taps a window unrolls: its innermost axes are unrolled while their taps together
/// stay within this, the axes outside them are loops.
constexpr std::int64_t kUnrolledTaps = 64;

/// Whether each window axis is unrolled (see kUnrolledTaps).
std::vector<bool> unrolledAxes(const ConvSpec& s) {
  std::vector<bool> unrolled(s.spatial, false);
  std::int64_t taps = 1;
  for (int i = s.spatial - 1; i >= 0; --i) {
    taps *= s.window[i];
    if (taps > kUnrolledTaps) break;
    unrolled[i] = true;
  }
  return unrolled;
}

/// The window loops and the accumulation, at `indent` inside the channel loop (if any).
std::string windowLoops(const ConvSpec& s, std::string indent) {
  std::ostringstream k;
  std::string xAddr =
      s.pool() ? "p_x + bi * x_s0 + co * x_s1" : "p_x + bi * x_s0 + (first + ci) * x_s1";
  std::string wAddr = s.kind == Kind::Transposed
                          ? "p_w + (first + ci) * w_s0 + (co % COUT_G) * w_s1"
                          : "p_w + co * w_s0 + ci * w_s1";
  std::string ok = "mask";
  const std::vector<bool> unrolled = unrolledAxes(s);
  for (int i = 0; i < s.spatial; ++i) {
    const std::string n = s.axis(i), d = std::to_string(2 + i);
    // Small windows are unrolled; larger ones (an adaptive pool over much of an image) loop
    // over their outer axes, which compiles in a moment where hundreds of unrolled taps take
    // minutes.
    k << indent << "for k" << n << " in " << (unrolled[i] ? "tl.static_range" : "range") << "(K"
      << n << "):\n";
    indent += kBody;
    if (s.kind == Kind::Transposed) {
      // Output o gathers input i where i * S - P + k * D == o: only taps that land on a stride.
      k << indent << "t" << n << " = o" << n << " + P" << n << " - k" << n << " * D" << n << "\n";
      k << indent << "i" << n << " = t" << n << " // S" << n << "\n";
      ok += " & (t" + n + " >= 0) & (i" + n + " * S" + n + " == t" + n + ")";
    } else if (s.adaptive()) {
      k << indent << "i" << n << " = start" << n << " + k" << n << "\n";
      ok += " & (i" + n + " < end" + n + ")";
    } else {
      k << indent << "i" << n << " = o" << n << " * S" << n << " - P" << n << " + k" << n << " * D"
        << n << "\n";
      ok += " & (i" + n + " >= 0)";
    }
    ok += " & (i" + n + " < I" + n + ")";
    xAddr += " + i" + n + " * x_s" + d;
    wAddr += " + k" + n + " * w_s" + d;
  }
  if (s.takesMax()) {
    k << indent << "xv = tl.load(" << xAddr << ", mask=" << ok << ", other=float('-inf'))\n";
    k << indent << "acc = tl.maximum(acc, xv)\n";
  } else if (s.pool()) {
    k << indent << "acc += tl.load(" << xAddr << ", mask=" << ok << ", other=0.0)\n";
  } else {
    k << indent << "xv = tl.load(" << xAddr << ", mask=" << ok << ", other=0.0)\n";
    k << indent << "wv = tl.load(" << wAddr << ", mask=mask, other=0.0)\n";
    k << indent << "acc += xv * wv\n";
  }
  return k.str();
}

/// The head's value from the accumulator: bias, and the average's divisor.
std::string headValue(const ConvSpec& s, const OpNode& cv) {
  std::string e = "acc";
  if (!s.bias.empty()) e += " + tl.load(p_bias + co * bias_s, mask=mask, other=0.0)";
  // avg_pool counts the padding in the window (count_include_pad=True, torch's default).
  if (s.kind == Kind::AvgPool) e += " / " + std::to_string(s.windowSize()) + ".0";
  if (s.kind == Kind::AdaptiveAvgPool) e += " / count";
  return statement(cv, e);
}

}  // namespace

std::optional<LoweredGroup> lowerConv(const LoweringInput& in, std::string& why) {
  const auto& [g, group, index, t, host] = in;
  const OpNode& cv = g.nodes[group.nodes.front()];
  const auto spec = convSpec(g, cv, why);
  if (!spec) return std::nullopt;
  const ConvSpec& s = *spec;
  const int sd = s.spatial, rank = sd + 2;
  const std::string dom = "_dom" + std::to_string(index);

  GroupState st(g, group);
  std::string body = headValue(s, cv);
  if (!lowerEpilogue(g, group, st, broadcastView(host, dom, rank), body, why)) return std::nullopt;
  const auto ops = st.operands();
  const std::string name = "k" + std::to_string(index) + "_conv";
  KernelSignature sig;
  sig.add("p_x", "_x");
  sig.add("p_w", s.pool() ? "_x" : "_w");
  if (!s.bias.empty()) sig.add("p_bias", "_bias");
  sig.addPointers(ops, group.stores, var);
  sig.add("n_elements", "_n");
  sig.add("C_OUT", dom + "[1]");
  if (s.pool()) {
    sig.add("CIN_G", "1");
    sig.add("COUT_G", "1");
  } else if (s.kind == Kind::Transposed) {  // weight (C_in, C_out / groups, k...)
    sig.add("CIN_G", "_w.shape[0] // _groups");
    sig.add("COUT_G", "_w.shape[1]");
  } else {  // weight (C_out, C_in / groups, k...)
    sig.add("CIN_G", "_w.shape[1]");
    sig.add("COUT_G", "_w.shape[0] // _groups");
  }
  for (int i = 0; i < sd; ++i) {
    sig.add("O" + s.axis(i), dom + "[" + std::to_string(2 + i) + "]");
    sig.add("I" + s.axis(i), "_x.shape[" + std::to_string(2 + i) + "]");
  }
  for (int i = 0; i < rank; ++i) sig.params.push_back("x_s" + std::to_string(i));
  for (int i = 0; i < rank; ++i) sig.params.push_back("w_s" + std::to_string(i));
  sig.args.push_back("*_x.stride()");
  sig.args.push_back(s.pool() ? "*_x.stride()" : "*_w.stride()");
  if (!s.bias.empty()) sig.add("bias_s", "_bias.stride(0)");
  sig.addStrides(ops, rank);
  sig.constexprs(s.constantNames());
  sig.constexprs({"BLOCK"});

  std::ostringstream k;
  k << sig.def(name);
  k << kBody << "# " << nodeList(g, group);
  if (s.pool()) {
    k << ": one output element per lane, " << (s.takesMax() ? "the max" : "the mean")
      << " over its window\n"
      << kBody << "# (out-of-range taps are padding).\n";
  } else {
    k << ": direct " << (s.kind == Kind::Transposed ? "transposed " : "")
      << "convolution, one output element per lane, summing input\n"
      << kBody << "# channels of its group times the kernel window (out-of-range taps are the zero "
      << "padding).\n";
  }
  k << kBody << "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n";
  k << kBody << "mask = offs < n_elements\n";
  k << s.outputCoordinates("offs");
  k << kBody << "co = rem % C_OUT\n" << kBody << "bi = rem // C_OUT\n";
  if (s.adaptive()) {
    // Output o averages (or takes the max of) inputs [floor(o * I / O), ceil((o + 1) * I / O)):
    // windows may differ.
    std::string count;
    for (int i = 0; i < sd; ++i) {
      const std::string n = s.axis(i);
      k << kBody << "start" << n << " = (o" << n << " * I" << n << ") // O" << n << "\n";
      k << kBody << "end" << n << " = ((o" << n << " + 1) * I" << n << " + O" << n << " - 1) // O"
        << n << "\n";
      count += (count.empty() ? "" : " * ") + std::string("(end") + n + " - start" + n + ")";
    }
    k << kBody << "count = (" << count << ").to(tl.float32)\n";
  }
  std::string indent = kBody;
  if (s.pool()) {
    k << kBody << "acc = tl.full((BLOCK,), " << (s.takesMax() ? "float('-inf')" : "0.0")
      << ", dtype=tl.float32)\n";
  } else {
    k << kBody << "first = (co // COUT_G) * CIN_G  # the group's first input channel\n";
    k << kBody << "acc = tl.zeros((BLOCK,), dtype=tl.float32)\n";
    k << kBody << "for ci in range(0, CIN_G):\n";
    indent += kBody;
  }
  k << windowLoops(s, indent);
  std::vector<std::string> coords = {"bi", "co"};
  for (int i = 0; i < sd; ++i) coords.push_back("o" + s.axis(i));
  k << loadOperands(g, ops, coords, "mask");
  k << body;
  for (const auto& out : group.stores) {
    k << kBody << "tl.store(out_" << out << " + offs, " << var(out) << ", mask=mask)\n";
  }

  std::ostringstream h;
  h << kHost << "# group " << index << ": " << nodeList(g, group)
    << (s.pool() ? " (window loop)\n" : " (direct convolution)\n");
  h << kHost << dom << " = " << host.shape(cv.shape, cv.altShape) << "\n";
  h << kHost << "_x = " << host.value(s.input) << "\n";
  if (!s.pool()) h << kHost << "_w = " << host.value(s.weight) << "\n";
  if (!s.bias.empty()) h << kHost << "_bias = " << host.value(s.bias) << "\n";
  if (!s.pool()) h << kHost << "_groups = " << s.groups << "\n";
  for (const auto& out : group.stores) h << allocate(g, out, host);
  h << kHost << "_n = _prod(" << dom << ")\n";
  h << bindOperands(ops);
  h << kHost << name << "[(_cdiv(_n, " << t.block << "),)](" << join(sig.args, ", ") << ", "
    << s.launchConstants() << ", BLOCK=" << t.block << launchOptions(t) << ")\n";
  return LoweredGroup{k.str(), h.str(),
                      "group " + std::to_string(index) + " conv [" + nodeList(g, group) +
                          "]: direct loops over input channels and the window, epilogue fused, "
                          "BLOCK=" +
                          std::to_string(t.block) + ", warps=" + std::to_string(t.warps)};
}

}  // namespace crucible::kernel_synth
