// Convolutions (1-D to 3-D, one group) as implicit GEMM over channels-last copies: the GPU
// form. One small kernel copies the input to (B, spatial..., C_in) and the weight to
// (C_out, taps..., C_in), so that both tl.dot operands are read along K (the input channels),
// the layout tensor cores take directly; the product then walks K as (tap, channel block), with
// each tap's input offsets computed once per step instead of a % and // per element (inputs of
// fewer channels than tl.dot's least K instead pack several taps into a step). A program's
// rows are ROWS output rows x BLOCK_W columns (a power of two), so Triton sees the columns as
// consecutive; in 3-D the rows run over (depth, height) together. On a GPU this is several times
// faster than lower_conv_gemm.cpp's form at the level-2 2-D shapes (docs/studies/
// conv_gemm_study.py; figures in docs/PERFORMANCE.md).
// Transposed convolutions of stride 1 are forward ones over the taps in reverse order
// (ConvSpec::flippedForward). Strided ones (without dilation) take the form split by stride
// class, in 1-D to 3-D: output o is reached through tap k only where S divides o + P - k, so the
// outputs of one class (o + P) mod S share their taps, every S-th one; the flat form masked the
// others out per tap.
// With the tf32x3-split precision the copies also split each fp32 value into a TF32 high part
// and the rest, and the K loop issues tf32x3's three products itself as plain TF32 dots over
// those parts, faster than tl.dot's own tf32x3 (which splits the tiles inside the loop) at the
// same accuracy (docs/studies/split_tf32_study.py; figures in docs/PERFORMANCE.md).
// bf16x3-split does the same over bfloat16 parts: hi and lo keep 16 of fp32's 24 significant
// bits (a product's error about 2^-16 of its size, against TF32 splitting's 2^-22), which kept
// the level-2 convolutions within the 1e-4 tolerance at twice TF32's tensor-core rate and half
// its operand bytes, and is faster than the TF32 split.
#include <algorithm>
#include <optional>
#include <sstream>

#include "core/kernel_synth/conv_spec.h"
#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

namespace {

/// How the channels-last copies split each fp32 value for the product.
enum class Split { None, Tf32, Bf16 };

/// (B, C, spatial...) -> (B, spatial..., C) for any strides of the source, for both of a
/// convolution's operands in one launch (`name`): the input's batches on the grid's third axis
/// first, then the weight's output channels; `name`_tile copies one tile of either. With a
/// split, `dst` gets each value rounded to TF32 or bfloat16 and `lo` the rest.
std::string channelsLastKernel(const std::string& name, int spatial, Split split) {
  const bool splits = split != Split::None;
  const std::string lo = splits ? "lo, " : "", lo2 = splits ? "lo2, " : "";
  std::ostringstream k;
  k << "@triton.jit\n"
    << "def " << name << "_tile(src, dst, " << lo
    << "C, W, P, s0, s1, s2, s3, b, BLOCK_C: tl.constexpr,\n"
    << "        BLOCK_P: tl.constexpr):\n"
    << kBody << "# copies batch b's (channels x positions) tile to positions x channels,\n"
    << kBody << "# reading along positions and writing along channels\n"
    << kBody << "rp = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)\n"
    << kBody << "rc = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)\n"
    << kBody << "mask = (rc[:, None] < C) & (rp[None, :] < P)\n";
  if (spatial == 2) {
    k << kBody << "src_p = (rp // W) * s2 + (rp % W) * s3\n";
  } else {
    k << kBody << "src_p = rp * s2\n";
  }
  k << kBody << "v = tl.load(src + b * s0 + rc[:, None] * s1 + src_p[None, :], mask=mask)\n"
    << kBody << "at = (b * P + rp[None, :]) * C + rc[:, None]\n";
  if (split == Split::None) {
    k << kBody << "tl.store(dst + at, v, mask=mask)\n";
  } else if (split == Split::Bf16) {
    k << bf16SplitLines("dst", "lo", "mask");
  } else {
    k << kBody
      << "# hi: v rounded to TF32 (10 mantissa bits: half of the dropped bits added, "
         "then\n"
      << kBody << "# dropped); lo = v - hi, exact in fp32. inf, NaN and values too large to round\n"
      << kBody << "# stay whole in hi.\n"
      << kBody << "bits = v.to(tl.uint32, bitcast=True)\n"
      << kBody << "rounded = ((bits + 0x1000) & 0xFFFFE000).to(tl.float32, bitcast=True)\n"
      << kBody << "hi = tl.where(tl.abs(v) < 3.0e38, rounded, v)\n"
      << kBody << "tl.store(dst + at, hi, mask=mask)\n"
      << kBody << "tl.store(lo + at, tl.where(hi == v, 0.0, v - hi), mask=mask)\n";
  }
  k << "\n\n@triton.jit\n"
    << "def " << name << "(src, dst, " << lo << "C, W, P, s0, s1, s2, s3, B, src2, dst2, " << lo2
    << "C2, W2, P2,\n"
    << "        t0, t1, t2, t3, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):\n"
    << kBody << "# both operands in one launch: the input's B batches, then the weight's rows\n"
    << kBody << "b = tl.program_id(2)\n"
    << kBody << "if b < B:\n"
    << kBody << kBody << name << "_tile(src, dst, " << lo
    << "C, W, P, s0, s1, s2, s3, b, BLOCK_C, BLOCK_P)\n"
    << kBody << "else:\n"
    << kBody << kBody << name << "_tile(src2, dst2, " << lo2
    << "C2, W2, P2, t0, t1, t2, t3, b - B, BLOCK_C, BLOCK_P)\n\n\n";
  return k.str();
}

/// One operand of the channels-last copy: its host view and the copy kernel's arguments.
struct ChannelsLastOperand {
  std::string positions, arguments;
};

/// Host lines making `dst` the channels-last copy's destination for `src` (a rank spatial+2
/// tensor), and `lo` the rest of its split when `lo` is not empty (the bfloat16 split's parts are
/// bfloat16); and what the copy kernel takes for it.
ChannelsLastOperand channelsLastOperand(std::ostringstream& h, const std::string& src,
                                        const std::string& dst, const std::string& lo, int spatial,
                                        Split split) {
  std::string shape = "(" + src + ".shape[0]";
  for (int i = 0; i < spatial; ++i) shape += ", " + src + ".shape[" + std::to_string(2 + i) + "]";
  shape += ", " + src + ".shape[1])";
  // 3-D goes through the 2-D copy with depth and height merged (a view where they are dense)
  const std::string view = spatial == 3 ? dst + "_dh" : src;
  if (spatial == 3) h << kHost << view << " = " << src << ".flatten(2, 3)\n";
  const std::string positions =
      spatial >= 2 ? view + ".shape[2] * " + view + ".shape[3]" : src + ".shape[2]";
  const std::string strides = spatial >= 2 ? "*" + view + ".stride()" : "*" + src + ".stride(), 0";
  const std::string width = spatial >= 2 ? view + ".shape[3]" : "1";
  h << kHost << dst << " = torch.empty(" << shape << ", device=" << src
    << ".device, dtype=" << (split == Split::Bf16 ? std::string("torch.bfloat16") : src + ".dtype")
    << ")\n";
  if (!lo.empty()) h << kHost << lo << " = torch.empty_like(" << dst << ")\n";
  return {positions, view + ", " + dst + ", " + (lo.empty() ? "" : lo + ", ") + src +
                         ".shape[1], " + width + ", " + positions + ", " + strides};
}

/// Host lines copying the input `_x` and the weight `_w` to channels-last `_xl` and `_wl` (and
/// their split's `_xl_lo`, `_wl_lo`) in one launch of `kernel`.
std::string channelsLastCopies(const std::string& kernel, int spatial, Split split) {
  const bool splits = split != Split::None;
  std::ostringstream h;
  const auto x = channelsLastOperand(h, "_x", "_xl", splits ? "_xl_lo" : "", spatial, split);
  const auto w = channelsLastOperand(h, "_w", "_wl", splits ? "_wl_lo" : "", spatial, split);
  // positions on the grid's first axis, the only one not limited to 65535 programs; each
  // operand's programs past its own positions and channels store nothing
  h << kHost << kernel << "[(_cdiv(max(" << x.positions << ", " << w.positions
    << "), 64), _cdiv(max(_x.shape[1], _w.shape[1]), 32), _x.shape[0] + _w.shape[0])](\n"
    << kHost << "    " << x.arguments << ", _x.shape[0],\n"
    << kHost << "    " << w.arguments << ", BLOCK_C=32, BLOCK_P=64)\n";
  return h.str();
}

/// What the channels-last lowering of a convolution decides before it writes any text.
struct ConvClPlan : GroupLowering {
  using GroupLowering::GroupLowering;
  std::optional<ConvSpec> spec;
  bool transposed = false;  // strided transposed: one program per stride class
  bool flipped = false;     // transposed of stride 1: a forward one with its taps reversed
  Split splitKind = Split::None;
  bool split = false;
  int sd = 0, rank = 0;  // spatial dims, and the tensors' rank
  bool twoD = false;     // an h axis: 2-D, or 3-D whose (d, h) rows a tile walks together
  bool threeD = false;   // a d axis too
  std::string dom, name, copy;
  std::string body;  // the accumulator's statement and the epilogue
  std::vector<KernelOperand> ops;
  KernelSignature sig;
};

/// The convolution's form and the epilogue; false with `why` where this form does not apply.
bool planConvCl(ConvClPlan& p, std::string& why) {
  const OpNode& cv = p.head;
  p.spec = convSpec(p.g, cv, why);
  if (!p.spec) return false;
  const ConvSpec& s = *p.spec;
  if (!s.channelsLastApplies()) {
    why = cv.op +
          ": the channels-last implicit GEMM covers ungrouped convolutions (transposed "
          "ones without dilation)";
    return false;
  }
  p.flipped = s.flippedForward();
  p.transposed = s.kind == ConvSpec::Kind::Transposed && !p.flipped;
  // Split operands only where they are fp32 (half precision products need no split).
  if (cv.dtype == "float32" && p.t.precision == kSplitPrecision) p.splitKind = Split::Tf32;
  if (cv.dtype == "float32" && p.t.precision == kBf16SplitPrecision) p.splitKind = Split::Bf16;
  p.split = p.splitKind != Split::None;
  if (p.flipped) p.spec = s.asFlippedForward();
  p.sd = s.spatial;
  p.rank = p.sd + 2;
  p.twoD = p.sd >= 2;
  p.threeD = p.sd == 3;
  p.dom = "_dom" + std::to_string(p.index);
  p.body = std::string(kBody) + var(cv.name) + " = acc";
  if (!s.bias.empty()) p.body += " + tl.load(p_bias + rn * bias_s, mask=n_ok, other=0.0)[None, :]";
  p.body += origin(cv);
  if (!lowerEpilogue(p.g, p.group, p.st, broadcastView(p.host, p.dom, p.rank), p.body, why))
    return false;
  p.ops = p.st.operands();
  p.name = "k" + std::to_string(p.index) + "_conv_gemm_cl";
  p.copy = "k" + std::to_string(p.index) + "_to_channels_last";
  return true;
}

/// The kernel's parameters and the launch's arguments.
void signConvCl(ConvClPlan& p) {
  const ConvSpec& s = *p.spec;
  KernelSignature& sig = p.sig;
  sig.add("p_x", "_xl");
  sig.add("p_w", "_wl");
  if (p.split) {
    sig.add("p_x_lo", "_xl_lo");
    sig.add("p_w_lo", "_wl_lo");
  }
  if (!s.bias.empty()) sig.add("p_bias", "_bias");
  sig.addPointers(p.ops, p.group.stores, var);
  sig.add("C_OUT", p.dom + "[1]");
  sig.add("C_IN", "_x.shape[1]");
  if (p.threeD) {
    sig.add("Od", p.dom + "[2]");
    sig.add("Id", "_x.shape[2]");
  }
  if (p.twoD) {
    sig.add("Oh", p.dom + "[" + std::to_string(p.rank - 2) + "]");
    sig.add("Ih", "_x.shape[" + std::to_string(p.rank - 2) + "]");
  }
  sig.add("Ow", p.dom + "[" + std::to_string(p.rank - 1) + "]");
  sig.add("Iw", "_x.shape[" + std::to_string(p.rank - 1) + "]");
  if (!s.bias.empty()) sig.add("bias_s", "_bias.stride(0)");
  sig.addStrides(p.ops, p.rank);
  sig.addOutputStrides(p.group.stores, p.rank);
  sig.constexprs(s.constantNames());
  sig.constexprs({"ROWS", "BLOCK_W", "BLOCK_N", "BLOCK_K"});
  if (!p.transposed) sig.constexprs({"PACKED"});
}

/// A transposed convolution's output positions along axis `a`: every S-th one of its class,
/// `index` counting them, and q<a>, the input position of the class's first tap.
std::string classAxis(const std::string& a, const std::string& index, const std::string& of) {
  const std::string o = "o" + a, S = "S" + a, P = "P" + a, c = "c" + a;
  return std::string(kBody) + c + " = " + of + "\n" + kBody + o + " = (" + c + " + " + S + " - " +
         P + " % " + S + ") % " + S + " + (" + index + ") * " + S + "\n" + kBody + "q" + a +
         " = (" + o + " + " + P + " - " + c + ") // " + S + "\n";
}

/// The program's tile: its image, output positions and output channels.
std::string convClTile(const ConvClPlan& p) {
  const bool twoD = p.twoD, transposed = p.transposed, threeD = p.threeD;
  std::ostringstream k;
  k << kBody << "pid_m = tl.program_id(0)\n" << kBody << "pid_n = tl.program_id(1)\n";
  const std::string perW = transposed ? "tl.cdiv(Ow, Sw)" : "Ow";
  // 3-D: a tile's rows run over (d, h) together, h fastest (of one class each, transposed)
  const std::string perH = transposed
                               ? (threeD ? "tl.cdiv(Od, Sd) * tl.cdiv(Oh, Sh)" : "tl.cdiv(Oh, Sh)")
                           : threeD ? "Od * Oh"
                                    : "Oh";
  k << kBody << "tiles_w = tl.cdiv(" << perW << ", BLOCK_W)\n";
  if (twoD) {
    k << kBody << "tiles_h = tl.cdiv(" << perH << ", ROWS)\n"
      << kBody << "bi = pid_m // (tiles_w * tiles_h)\n"
      << kBody << "th = (pid_m // tiles_w) % tiles_h\n";
  } else {
    k << kBody << "bi = pid_m // tiles_w\n";
  }
  k << kBody << "r = tl.arange(0, ROWS * BLOCK_W)\n";
  // The tile's position counters along each axis: the output positions themselves, or for a
  // transposed convolution the index of each position within its stride class.
  const std::string wIndex = "(pid_m % tiles_w) * BLOCK_W + r % BLOCK_W";
  const std::string hIndex = "th * ROWS + r // BLOCK_W";
  if (transposed && threeD) {
    // the class is (cd, ch, cw), w fastest; rows count (d, h) positions within it
    k << kBody << "odh = " << hIndex << "\n";
    k << classAxis("w", wIndex, "tl.program_id(2) % Sw");
    k << classAxis("h", "odh % tl.cdiv(Oh, Sh)", "(tl.program_id(2) // Sw) % Sh");
    k << classAxis("d", "odh // tl.cdiv(Oh, Sh)", "tl.program_id(2) // (Sw * Sh)");
  } else if (transposed) {
    k << classAxis("w", wIndex, twoD ? "tl.program_id(2) % Sw" : "tl.program_id(2)");
    if (twoD) k << classAxis("h", hIndex, "tl.program_id(2) // Sw");
  } else if (threeD) {
    k << kBody << "ow = " << wIndex << "\n";
    k << kBody << "odh = " << hIndex << "\n";
    k << kBody << "od = odh // Oh\n" << kBody << "oh = odh % Oh\n";
  } else {
    k << kBody << "ow = " << wIndex << "\n";
    if (twoD) k << kBody << "oh = " << hIndex << "\n";
  }
  k << kBody
    << (threeD && transposed ? "m_ok = (od < Od) & (oh < Oh) & (ow < Ow)\n"
        : threeD             ? "m_ok = (odh < Od * Oh) & (ow < Ow)\n"
        : twoD               ? "m_ok = (oh < Oh) & (ow < Ow)\n"
                             : "m_ok = ow < Ow\n");
  k << kBody << "rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n";
  k << kBody << "n_ok = rn < C_OUT\n";
  return k.str();
}

std::string convClTileProduct(const ConvClPlan& p, const std::string& b2);

/// The K loop over (tap, input channel block): the tap's input positions, both tiles, their
/// product.
std::string convClKLoop(const ConvClPlan& p) {
  const bool twoD = p.twoD, threeD = p.threeD;
  const std::string b2 = std::string(kBody) + kBody;
  std::ostringstream k;
  if (p.transposed) {
    k << kBody << "TW = tl.cdiv(Kw - cw, Sw)  # the class's taps along each axis\n";
    if (twoD) k << kBody << "TH = tl.cdiv(Kh - ch, Sh)\n";
    if (threeD) k << kBody << "TD = tl.cdiv(Kd - cd, Sd)\n";
    k << kBody << "for step in range(0, "
      << (threeD ? "TD * TH * TW"
          : twoD ? "TH * TW"
                 : "TW")
      << " * CB):\n";
    k << b2 << "tap = step // CB\n";
    if (threeD) {
      k << b2 << "kd = cd + (tap // (TH * TW)) * Sd\n"
        << b2 << "kh = ch + ((tap // TW) % TH) * Sh\n"
        << b2 << "kw = cw + (tap % TW) * Sw\n";
      k << b2 << "id = qd - tap // (TH * TW)\n"
        << b2 << "ih = qh - (tap // TW) % TH\n"
        << b2 << "iw = qw - tap % TW\n";
    } else if (twoD) {
      k << b2 << "kh = ch + (tap // TW) * Sh\n" << b2 << "kw = cw + (tap % TW) * Sw\n";
      k << b2 << "ih = qh - tap // TW\n" << b2 << "iw = qw - tap % TW\n";
    } else {
      k << b2 << "kw = cw + tap * Sw\n" << b2 << "iw = qw - tap\n";
    }
  } else {
    k << kBody << "for step in range(0, "
      << (threeD ? "Kd * Kh * Kw"
          : twoD ? "Kh * Kw"
                 : "Kw")
      << " * CB):\n";
    k << b2 << "tap = step // CB\n";
    if (threeD) {
      k << b2 << "kd = tap // (Kh * Kw)\n"
        << b2 << "kh = (tap // Kw) % Kh\n"
        << b2 << "kw = tap % Kw\n";
      k << b2 << "id = od * Sd - Pd + kd * Dd\n";
      k << b2 << "ih = oh * Sh - Ph + kh * Dh\n";
      k << b2 << "iw = ow * Sw - Pw + kw * Dw\n";
    } else if (twoD) {
      k << b2 << "kh = tap // Kw\n" << b2 << "kw = tap % Kw\n";
      k << b2 << "ih = oh * Sh - Ph + kh * Dh\n";
      k << b2 << "iw = ow * Sw - Pw + kw * Dw\n";
    } else {
      k << b2 << "kw = tap\n" << b2 << "iw = ow * Sw - Pw + tap * Dw\n";
    }
  }
  k << b2 << "rk = (step % CB) * BLOCK_K + tl.arange(0, BLOCK_K)\n";
  k << b2 << "k_ok = rk < C_IN\n";
  if (threeD) {
    k << b2
      << "ok = m_ok & (id >= 0) & (id < Id) & (ih >= 0) & (ih < Ih) & (iw >= 0) & (iw < Iw)\n";
    k << b2 << "pos = ((bi * Id + id) * Ih + ih) * Iw + iw\n";
  } else if (twoD) {
    k << b2 << "ok = m_ok & (ih >= 0) & (ih < Ih) & (iw >= 0) & (iw < Iw)\n";
    k << b2 << "pos = (bi * Ih + ih) * Iw + iw\n";
  } else {
    k << b2 << "ok = m_ok & (iw >= 0) & (iw < Iw)\n";
    k << b2 << "pos = bi * Iw + iw\n";
  }
  k << b2 << "a_at = pos[:, None] * C_IN + rk[None, :]\n"
    << b2 << "a_ok = ok[:, None] & k_ok[None, :]\n"
    << b2 << "b_at = (rn[None, :] * "
    << (p.flipped ? std::string(threeD ? "(Kd * Kh * Kw) + Kd * Kh * Kw - 1 - tap"
                                : twoD ? "(Kh * Kw) + Kh * Kw - 1 - tap"
                                       : "Kw + Kw - 1 - tap")
        : threeD  ? "(Kd * Kh * Kw) + (kd * Kh + kh) * Kw + kw"
        : twoD    ? "(Kh * Kw) + kh * Kw + kw"
                  : "Kw + kw")
    << ") * C_IN + rk[:, None]\n"
    << b2 << "b_ok = k_ok[:, None] & n_ok[None, :]\n";
  k << convClTileProduct(p, b2);
  return k.str();
}

/// A forward convolution's K loop with the taps packed into K, for inputs of few channels
/// (PACKED): K runs over (tap, input channel) as the channels-last weight lays them out, so a
/// BLOCK_K step takes several taps at once where the tap-by-tap loop would pad each tap's few
/// channels up to tl.dot's least K of 16 (4 channels: three quarters of every product wasted).
/// Each element's tap and channel come from its K index.
std::string convClPackedKLoop(const ConvClPlan& p) {
  const bool twoD = p.twoD, threeD = p.threeD;
  const std::string b2 = std::string(kBody) + kBody;
  const std::string taps = threeD ? "Kd * Kh * Kw" : twoD ? "Kh * Kw" : "Kw";
  std::ostringstream k;
  k << kBody << "# K packs (tap, input channel): several taps per step\n";
  k << kBody << "for k0 in range(0, " << taps << " * C_IN, BLOCK_K):\n";
  k << b2 << "rk = k0 + tl.arange(0, BLOCK_K)\n";
  k << b2 << "k_ok = rk < " << taps << " * C_IN\n";
  k << b2 << "tap = rk // C_IN\n";
  k << b2 << "ci = rk % C_IN\n";
  if (threeD) {
    k << b2 << "kd = tap // (Kh * Kw)\n"
      << b2 << "kh = (tap // Kw) % Kh\n"
      << b2 << "kw = tap % Kw\n";
    k << b2 << "id = od[:, None] * Sd - Pd + kd[None, :] * Dd\n";
  } else if (twoD) {
    k << b2 << "kh = tap // Kw\n" << b2 << "kw = tap % Kw\n";
  } else {
    k << b2 << "kw = tap\n";
  }
  if (twoD) k << b2 << "ih = oh[:, None] * Sh - Ph + kh[None, :] * Dh\n";
  k << b2 << "iw = ow[:, None] * Sw - Pw + kw[None, :] * Dw\n";
  k << b2 << "a_ok = m_ok[:, None] & k_ok[None, :]" << (threeD ? " & (id >= 0) & (id < Id)" : "")
    << (twoD ? " & (ih >= 0) & (ih < Ih)" : "") << " & (iw >= 0) & (iw < Iw)\n";
  k << b2 << "a_at = "
    << (threeD ? "(((bi * Id + id) * Ih + ih) * Iw + iw)"
        : twoD ? "((bi * Ih + ih) * Iw + iw)"
               : "(bi * Iw + iw)")
    << " * C_IN + ci[None, :]\n";
  k << b2 << "b_at = rn[None, :] * (" << taps << " * C_IN) + "
    << (p.flipped ? "((" + taps + " - 1 - tap) * C_IN + ci)" : std::string("rk")) << "[:, None]\n";
  k << b2 << "b_ok = k_ok[:, None] & n_ok[None, :]\n";
  k << convClTileProduct(p, b2);
  return k.str();
}

/// The K step's two tiles loaded at a_at, b_at and their product accumulated, at `b2`'s depth.
std::string convClTileProduct(const ConvClPlan& p, const std::string& b2) {
  std::ostringstream k;
  k << b2 << "a_tile = tl.load(p_x + a_at, mask=a_ok, other=0.0)\n"
    << b2 << "b_tile = tl.load(p_w + b_at, mask=b_ok, other=0.0)\n";
  if (p.split) {
    // bfloat16 parts go to tl.dot as they are; fp32 ones as TF32, which they hold exactly.
    const std::string how =
        p.splitKind == Split::Tf32 ? std::string(", input_precision=\"tf32\")") : ")";
    k << b2 << "# " << (p.splitKind == Split::Tf32 ? "tf32x3" : "bf16x3")
      << "'s products over the split copies: the two small ones, then hi x hi\n"
      << b2 << "a_lo = tl.load(p_x_lo + a_at, mask=a_ok, other=0.0)\n"
      << b2 << "b_lo = tl.load(p_w_lo + b_at, mask=b_ok, other=0.0)\n"
      << b2 << "acc = tl.dot(a_lo, b_tile, acc" << how << "\n"
      << b2 << "acc = tl.dot(a_tile, b_lo, acc" << how << "\n"
      << b2 << "acc = tl.dot(a_tile, b_tile, acc" << how << "\n";
  } else {
    k << b2 << "acc += " << dotCall(p.t) << "\n";
  }
  return k.str();
}

std::string convClKernel(const ConvClPlan& p) {
  const bool twoD = p.twoD, threeD = p.threeD;
  std::ostringstream k;
  k << channelsLastKernel(p.copy, std::min(p.sd, 2), p.splitKind);
  k << p.sig.def(p.name);
  k << kBody << "# " << nodeList(p.g, p.group)
    << " as implicit GEMM over channels-last copies: rows are\n"
    << kBody << "# ROWS x BLOCK_W output positions of one image, columns output channels, K runs\n"
    << kBody << "# over (tap, input channel block); out-of-range taps are the zero padding.\n";
  if (p.flipped) {
    k << kBody << "# Transposed with stride 1: a forward convolution over the weight's taps in\n"
      << kBody << "# reverse order, padded by (K - 1) * D - P\n";
  }
  if (p.transposed) {
    k << kBody << "# Transposed: output o takes input (o + P - k) / S through tap k only where S\n"
      << kBody << "# divides o + P - k, so a program takes the positions of one class c = (o + P)\n"
      << kBody << "# mod S (grid axis 2), whose taps are exactly c, c + S, c + 2S, ...\n";
  }
  k << convClTile(p);
  k << kBody << "# the channels-last input is (B, "
    << (threeD ? "Id, Ih, Iw"
        : twoD ? "Ih, Iw"
               : "Iw")
    << ", C_IN), the weight (C_OUT, "
    << (threeD ? "Kd, Kh, Kw"
        : twoD ? "Kh, Kw"
               : "Kw")
    << ", C_IN)\n";
  k << kBody << "CB = tl.cdiv(C_IN, BLOCK_K)\n";
  k << kBody << "acc = tl.zeros((ROWS * BLOCK_W, BLOCK_N), dtype=tl.float32)\n";
  if (p.transposed) {
    k << convClKLoop(p);
  } else {
    k << kBody << "if PACKED:\n"
      << indented(convClPackedKLoop(p)) << kBody << "else:\n"
      << indented(convClKLoop(p));
  }
  k << kBody << "mask = m_ok[:, None] & n_ok[None, :]\n";
  std::vector<std::string> coords = {"bi", "rn[None, :]"};
  if (threeD) coords.push_back("od[:, None]");
  if (twoD) coords.push_back("oh[:, None]");
  coords.push_back("ow[:, None]");
  k << loadOperands(p.g, p.ops, coords, "mask");
  k << p.body;
  k << storeOutputs(p.group.stores, coords, "mask");
  return k.str();
}

std::string convClHost(const ConvClPlan& p) {
  const ConvSpec& s = *p.spec;
  const Tiling& t = p.t;
  const HostContext& host = p.host;
  const std::string& dom = p.dom;
  const bool twoD = p.twoD, transposed = p.transposed;
  const int blockW = t.blockM;  // the host narrows it to the output's width
  const std::string last = dom + "[" + std::to_string(p.rank - 1) + "]";
  const std::string sw = std::to_string(s.stride[p.sd - 1]);
  const std::string widthPerTile = transposed ? "_cdiv(" + last + ", " + sw + ")" : last;
  std::string heightPerTile;
  if (p.threeD) {
    // (d, h) rows together, of one stride class each when transposed
    heightPerTile = transposed
                        ? "_cdiv(" + dom + "[2], " + std::to_string(s.stride[0]) + ") * _cdiv(" +
                              dom + "[3], " + std::to_string(s.stride[1]) + ")"
                        : dom + "[2] * " + dom + "[3]";
  } else if (twoD) {
    heightPerTile =
        transposed ? "_cdiv(" + dom + "[2], " + std::to_string(s.stride[0]) + ")" : dom + "[2]";
  }
  std::ostringstream h;
  h << kHost << "# group " << p.index << ": " << nodeList(p.g, p.group)
    << " (implicit GEMM over channels-last copies)\n";
  h << kHost << dom << " = " << host.shape(p.head.shape, p.head.altShape) << "\n";
  h << kHost << "_x = " << host.value(s.input) << "\n";
  // A transposed convolution's weight is (C_IN, C_OUT, taps...): copied as (C_OUT, taps, C_IN).
  h << kHost << "_w = " << host.value(s.weight)
    << (transposed || p.flipped ? ".transpose(0, 1)" : "") << "\n";
  if (!s.bias.empty()) h << kHost << "_bias = " << host.value(s.bias) << "\n";
  h << channelsLastCopies(p.copy, p.sd, p.splitKind);
  for (const auto& out : p.group.stores) h << allocate(p.g, out, host);
  h << bindOperands(p.ops);
  h << kHost << "# a tile is _rows output rows of _bw columns (a power of two)"
    << (transposed ? ", of one stride class" : "") << "\n";
  h << kHost << "_bw = min(max(_next_power_of_2(" << widthPerTile << "), 16), " << blockW << ")\n";
  // K blocks no wider than the input's channels (few channels would leave most of each block
  // masked), and at least 16, tl.dot's smallest K.
  h << kHost << "_bk = min(" << t.blockK << ", max(16, _next_power_of_2(_x.shape[1])))\n";
  if (!transposed) {
    // inputs of fewer channels than tl.dot's least K pack several taps into each K step
    h << kHost << "_packed = _x.shape[1] < 16\n";
    h << kHost << "_bk = 32 if _packed else _bk\n";
  }
  h << kHost << "_rows = " << (twoD ? std::to_string(t.blockM) + " // _bw" : "1") << "\n";
  int classes = 1;
  for (int v : s.stride) classes *= v;
  h << kHost << "_grid = (" << dom << "[0] * "
    << (twoD ? "_cdiv(" + heightPerTile + ", _rows) * " : "") << "_cdiv(" << widthPerTile
    << ", _bw), _cdiv(" << dom << "[1], " << t.blockN << ")"
    << (transposed ? ", " + std::to_string(classes) : "") << ")\n";
  // shared memory per element of both tiles: two bfloat16 parts, two fp32 parts, or one value
  const int elementBytes = p.splitKind == Split::Bf16   ? 4
                           : p.splitKind == Split::Tf32 ? 8
                                                        : dtypeBytes(p.head.dtype);
  h << kHost << p.name << "[_grid](" << join(p.sig.args, ", ") << ", " << s.launchConstants()
    << ", ROWS=_rows, BLOCK_W=_bw, BLOCK_N=" << t.blockN << ", BLOCK_K=_bk"
    << (transposed ? "" : ", PACKED=_packed")
    << pipelinedLaunchOptions(t, elementBytes, "_x.device") << ")\n";
  return h.str();
}

}  // namespace

std::optional<LoweredGroup> lowerConvGemmChannelsLast(const LoweringInput& in, std::string& why) {
  ConvClPlan p(in);
  if (!planConvCl(p, why)) return std::nullopt;
  signConvCl(p);
  return LoweredGroup{convClKernel(p), convClHost(p),
                      "group " + std::to_string(in.index) + " conv [" + nodeList(in.g, in.group) +
                          "]: implicit GEMM through tl.dot over channels-last copies, epilogue "
                          "fused, " +
                          productLabel(in.t)};
}

}  // namespace crucible::kernel_synth
