// Recurrent layers (nn.RNN, nn.LSTM, nn.GRU; several layers, both directions): a time loop on
// the host over fused cell kernels. Per layer and direction, one kernel projects the whole input
// sequence by W_ih at once; then each step's kernel multiplies the previous hidden state by W_hh
// (one tl.dot accumulator per gate), adds the projection and the biases, applies the gates and
// writes the new state straight into the layer's output, which the next step reads back as its
// previous state. Products are exact fp32 (ieee): a recurrence carries every step's rounding
// into the next.
#include <sstream>

#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

using nlohmann::json;

namespace {

constexpr int kBlockB = 16, kBlockH = 32, kBlockK = 32;  // cell: batch rows, hidden units, K
constexpr int kProjM = 64, kProjG = 64, kProjK = 32;     // input projection tiles

std::string tanhOf(const std::string& x) {
  return "(2.0 * tl.sigmoid(2.0 * (" + x + ")) - 1.0)";
}

int gatesOf(const std::string& mode) {
  return mode == "LSTM" ? 4 : mode == "GRU" ? 3 : 1;
}

std::string projectionKernel(const std::string& name) {
  const std::string b = kBody;
  std::ostringstream k;
  k << "@triton.jit\n"
    << "def " << name
    << "(x, x_sn, x_st, x_sk, w, w_sg, w_sk, bias, out, T, M, G, K, BLOCK_M: tl.constexpr, "
       "BLOCK_G: tl.constexpr, BLOCK_K: tl.constexpr):\n"
    << b << "# the layer's input projection for every step at once:\n"
    << b << "# out[n * T + t, g] = x[n, t, :] . w[g, :] + bias[g]\n"
    << b << "rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)\n"
    << b << "rg = tl.program_id(1) * BLOCK_G + tl.arange(0, BLOCK_G)\n"
    << b << "rn = rm // T\n"
    << b << "rt = rm % T\n"
    << b << "acc = tl.zeros((BLOCK_M, BLOCK_G), dtype=tl.float32)\n"
    << b << "for k0 in range(0, K, BLOCK_K):\n"
    << b << b << "rk = k0 + tl.arange(0, BLOCK_K)\n"
    << b << b
    << "a = tl.load(x + rn[:, None] * x_sn + rt[:, None] * x_st + rk[None, :] * x_sk, "
       "mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)\n"
    << b << b
    << "wt = tl.load(w + rg[None, :] * w_sg + rk[:, None] * w_sk, mask=(rg[None, :] < G) & "
       "(rk[:, None] < K), other=0.0)\n"
    << b << b << "acc += tl.dot(a, wt, input_precision=\"ieee\")\n"
    << b << "acc += tl.load(bias + rg, mask=rg < G, other=0.0)[None, :]\n"
    << b
    << "tl.store(out + rm[:, None] * G + rg[None, :], acc, mask=(rm[:, None] < M) & (rg[None, "
       ":] < G))\n\n\n";
  return k.str();
}

/// One step of the cell: the recurrent product per gate, then the gates and the new state.
std::string cellKernel(const std::string& name, const std::string& mode) {
  const std::string b = kBody, bb = std::string(kBody) + kBody;
  const int gates = gatesOf(mode);
  const bool lstm = mode == "LSTM";
  std::ostringstream k;
  k << "@triton.jit\n"
    << "def " << name << "(pre, pre_sn, h, h_sn, h_sk, " << (lstm ? "c, c_sn, c_sk, " : "")
    << "w, w_sg, w_sk, bias, h_out, ho_sn, " << (lstm ? "c_out, co_sn, " : "") << "hn, hn_sn, "
    << (lstm ? "cn, cn_sn, " : "")
    << "N, H, last, BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):\n";
  k << b << "# one step of " << mode << " for a BLOCK_B x BLOCK_H tile of (batch, hidden unit)\n";
  k << b << "rb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)\n";
  k << b << "rh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)\n";
  k << b << "ok = (rb[:, None] < N) & (rh[None, :] < H)\n";
  for (int g = 0; g < gates; ++g)
    k << b << "acc" << g << " = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)\n";
  k << b << "# the previous state times W_hh, gate by gate (rows g * H + unit of W_hh)\n";
  k << b << "for k0 in range(0, H, BLOCK_K):\n";
  k << bb << "rk = k0 + tl.arange(0, BLOCK_K)\n";
  k << bb
    << "hk = tl.load(h + rb[:, None] * h_sn + rk[None, :] * h_sk, mask=(rb[:, None] < N) & "
       "(rk[None, :] < H), other=0.0)\n";
  k << bb << "wmask = (rk[:, None] < H) & (rh[None, :] < H)\n";
  for (int g = 0; g < gates; ++g) {
    k << bb << "w" << g << " = tl.load(w + (" << g
      << " * H + rh)[None, :] * w_sg + rk[:, None] * w_sk, mask=wmask, other=0.0)\n";
    k << bb << "acc" << g << " += tl.dot(hk, w" << g << ", input_precision=\"ieee\")\n";
  }
  // x-projection (with b_ih) and b_hh per gate
  for (int g = 0; g < gates; ++g) {
    k << b << "x" << g << " = tl.load(pre + rb[:, None] * pre_sn + (" << g
      << " * H + rh)[None, :], mask=ok, other=0.0)\n";
    k << b << "r" << g << " = acc" << g << " + tl.load(bias + " << g
      << " * H + rh, mask=rh < H, other=0.0)[None, :]\n";
  }
  if (lstm) {  // gates i, f, g, o
    k << b << "c_prev = tl.load(c + rb[:, None] * c_sn + rh[None, :] * c_sk, mask=ok, other=0.0)\n";
    k << b << "c_new = tl.sigmoid(x1 + r1) * c_prev + tl.sigmoid(x0 + r0) * " << tanhOf("x2 + r2")
      << "\n";
    k << b << "h_new = tl.sigmoid(x3 + r3) * " << tanhOf("c_new") << "\n";
  } else if (mode == "GRU") {  // gates r, z, n; b_hn inside the reset gate's product
    k << b << "h_prev = tl.load(h + rb[:, None] * h_sn + rh[None, :] * h_sk, mask=ok, other=0.0)\n";
    k << b << "reset = tl.sigmoid(x0 + r0)\n";
    k << b << "update = tl.sigmoid(x1 + r1)\n";
    k << b << "cand = " << tanhOf("x2 + reset * r2") << "\n";
    k << b << "h_new = (1.0 - update) * cand + update * h_prev\n";
  } else {
    k << b << "h_new = "
      << (mode == "RNN_RELU" ? std::string("tl.maximum(x0 + r0, 0.0)") : tanhOf("x0 + r0")) << "\n";
  }
  k << b << "tl.store(h_out + rb[:, None] * ho_sn + rh[None, :], h_new, mask=ok)\n";
  if (lstm) k << b << "tl.store(c_out + rb[:, None] * co_sn + rh[None, :], c_new, mask=ok)\n";
  k << b << "# the last step also writes the final states\n";
  k << b << "tl.store(hn + rb[:, None] * hn_sn + rh[None, :], h_new, mask=ok & (last != 0))\n";
  if (lstm)
    k << b << "tl.store(cn + rb[:, None] * cn_sn + rh[None, :], c_new, mask=ok & (last != 0))\n";
  k << "\n\n";
  return k.str();
}

}  // namespace

std::optional<LoweredGroup> lowerRecurrent(const LoweringInput& in, std::string& why) {
  const auto& [g, group, index, t, host] = in;
  const OpNode& n = g.nodes[group.nodes.front()];
  const std::string mode = n.attrs.value("mode", std::string());
  const json layersAttr = n.attrs.value("num_layers", json()),
             hidden = n.attrs.value("hidden_size", json());
  if ((mode != "LSTM" && mode != "GRU" && mode != "RNN_TANH" && mode != "RNN_RELU") ||
      !layersAttr.is_number_integer() || !hidden.is_number_integer()) {
    why = "recurrent layer " + mode + " (line " + std::to_string(n.line) + ")";
    return std::nullopt;
  }
  const bool lstm = mode == "LSTM", bias = n.attrs.value("bias", true);
  const bool batchFirst = n.attrs.value("batch_first", false);
  const int layers = layersAttr.get<int>(), dirs = n.attrs.value("bidirectional", false) ? 2 : 1;
  const int gates = gatesOf(mode);
  const std::size_t perLayer = bias ? 4 : 2;
  // inputs: x, h0, c0, then (w_ih, w_hh[, b_ih, b_hh]) per layer and direction
  if (n.inputs.size() != 3 + perLayer * layers * dirs || !n.inputs[0].isRef() ||
      shapeOfValue(g, n.inputs[0].ref).size() != 3) {
    why = "recurrent layer over unbatched input or with parameters it cannot find (line " +
          std::to_string(n.line) + ")";
    return std::nullopt;
  }
  const std::string i = std::to_string(index), h = std::to_string(hidden.get<int>());
  const std::string proj = "k" + i + "_projection", cell = "k" + i + "_" +
                                                           (lstm            ? "lstm"
                                                            : mode == "GRU" ? "gru"
                                                                            : "rnn") +
                                                           "_cell";
  const std::string x = host.value(n.inputs[0].ref), dev = host.device, f32 = "torch.float32";
  auto param = [&](std::size_t k) { return host.value(n.inputs[k].ref); };
  std::ostringstream hst;
  const std::string H = kHost, B1 = std::string(kHost) + "    ", B2 = B1 + "    ", B3 = B2 + "    ";
  hst << H << "# group " << i << ": " << mode << ", " << layers << " layer(s), " << dirs
      << " direction(s) (a time loop over fused cell kernels)\n";
  hst << H << "_seq = " << x << (batchFirst ? "" : ".transpose(0, 1)") << "  # (N, T, features)\n";
  hst << H << "_N, _T, _H = _seq.shape[0], _seq.shape[1], " << h << "\n";
  hst << H << "_zero_h = torch.zeros((_N, _H), device=" << dev << ", dtype=" << f32 << ")\n";
  if (!bias)
    hst << H << "_no_bias = torch.zeros((" << gates << " * _H,), device=" << dev
        << ", dtype=" << f32 << ")\n";
  hst << H << "_h0 = " << (n.inputs[1].isRef() ? host.value(n.inputs[1].ref) : "None") << "\n";
  if (lstm)
    hst << H << "_c0 = " << (n.inputs[2].isRef() ? host.value(n.inputs[2].ref) : "None") << "\n";
  hst << H << "_weights = [";
  for (int l = 0; l < layers * dirs; ++l) {
    const std::size_t at = 3 + perLayer * l;
    hst << "(" << param(at) << ", " << param(at + 1) << ", " << (bias ? param(at + 2) : "_no_bias")
        << ", " << (bias ? param(at + 3) : "_no_bias") << "), ";
  }
  hst << "]\n";
  hst << H << "_hn = torch.empty((" << layers * dirs << ", _N, _H), device=" << dev
      << ", dtype=" << f32 << ")\n";
  if (lstm) hst << H << "_cn = torch.empty_like(_hn)\n";
  hst << H << "_grid = (_cdiv(_N, " << kBlockB << "), _cdiv(_H, " << kBlockH << "))\n";
  hst << H << "for _layer in range(" << layers << "):\n";
  hst << B1 << "_out = torch.empty((_N, _T, " << dirs << " * _H), device=" << dev
      << ", dtype=" << f32 << ")\n";
  hst << B1 << "for _d in range(" << dirs << "):\n";
  hst << B2 << "_slot = _layer * " << dirs << " + _d\n";
  hst << B2 << "_w_ih, _w_hh, _b_ih, _b_hh = _weights[_slot]\n";
  hst << B2 << "_pre = torch.empty((_N * _T, " << gates << " * _H), device=" << dev
      << ", dtype=" << f32 << ")\n";
  hst << B2 << proj << "[(_cdiv(_N * _T, " << kProjM << "), _cdiv(" << gates << " * _H, " << kProjG
      << "))](_seq, *_seq.stride(), _w_ih, *_w_ih.stride(), _b_ih, _pre, "
         "_T, _N * _T, "
      << gates << " * _H, _seq.shape[2], BLOCK_M=" << kProjM << ", BLOCK_G=" << kProjG
      << ", BLOCK_K=" << kProjK << ")\n";
  hst << B2 << "_pre3 = _pre.view(_N, _T, " << gates << " * _H)\n";
  hst << B2 << "_h = _zero_h if _h0 is None else _h0[_slot]\n";
  if (lstm) {
    hst << B2 << "_c = _zero_h if _c0 is None else _c0[_slot]\n";
    hst << B2 << "_cells = torch.empty((2, _N, _H), device=" << dev << ", dtype=" << f32 << ")\n";
  }
  hst << B2 << "_steps = range(_T) if _d == 0 else range(_T - 1, -1, -1)\n";
  hst << B2 << "for _i, _t in enumerate(_steps):\n";
  hst << B3 << "_h_out = _out[:, _t, _d * _H:(_d + 1) * _H]\n";
  if (lstm) hst << B3 << "_c_out = _cells[_i % 2]\n";
  hst << B3 << cell << "[_grid](_pre3[:, _t], _pre3.stride(0), _h, *_h.stride(), "
      << (lstm ? "_c, *_c.stride(), " : "")
      << "_w_hh, *_w_hh.stride(), _b_hh, _h_out, _h_out.stride(0), "
      << (lstm ? "_c_out, _c_out.stride(0), " : "") << "_hn[_slot], _hn.stride(1), "
      << (lstm ? "_cn[_slot], _cn.stride(1), " : "")
      << "_N, _H, int(_i == _T - 1), BLOCK_B=" << kBlockB << ", BLOCK_H=" << kBlockH
      << ", BLOCK_K=" << kBlockK << ")\n";
  hst << B3 << "_h = _h_out\n";
  if (lstm) hst << B3 << "_c = _c_out\n";
  hst << B1 << "_seq = _out\n";
  // this node's output, and those of the nodes that share the layer (graph_rewrite)
  std::vector<std::pair<std::string, std::string>> outputs = {
      {n.attrs.value("output", std::string("sequence")), n.name}};
  const json also = n.attrs.value("also", json::object());
  for (const auto& [output, name] : also.items())
    outputs.emplace_back(output, name.get<std::string>());
  for (const auto& [output, name] : outputs) {
    const std::string value = output == "h_n"   ? "_hn"
                              : output == "c_n" ? "_cn"
                                                : (batchFirst ? "_seq" : "_seq.transpose(0, 1)");
    if (output == "c_n" && !lstm) {
      why = "c_n of a " + mode + " layer";
      return std::nullopt;
    }
    hst << H << var(name) << " = " << value << "  # " << output << " (line " << n.line << ")\n";
  }
  return LoweredGroup{projectionKernel(proj) + cellKernel(cell, mode), hst.str(),
                      "group " + i + " recurrent [" + mode + " " + outputs.front().first +
                          "]: a time loop over fused cell kernels, BLOCK_B=" +
                          std::to_string(kBlockB) + " BLOCK_H=" + std::to_string(kBlockH)};
}

}  // namespace crucible::kernel_synth
