#include "core/llm/torch/transformer.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

#include "core/llm/model_error.h"

namespace crucible::llm {
namespace {

class WeightLoader {
 public:
  WeightLoader(const WeightSource& source, at::Device device, at::ScalarType dtype)
      : source_(source), device_(device), dtype_(dtype) {}

  at::Tensor get(const std::string& name, std::vector<std::int64_t> shape) const {
    at::Tensor t = optional(name, shape);
    if (!t.defined()) throw ModelError("tensor '" + name + "' is missing");
    return t;
  }
  at::Tensor optional(const std::string& name, std::vector<std::int64_t> shape) const {
    const at::Tensor found = source_.find(name);
    if (!found.defined()) return found;
    if (found.sizes() != at::IntArrayRef(shape)) {
      std::string got, want;
      for (auto d : found.sizes()) got += std::to_string(d) + ",";
      for (auto d : shape) want += std::to_string(d) + ",";
      throw ModelError("tensor '" + name + "' has shape [" + got + "], the config implies [" +
                       want + "]");
    }
    // The source may alias the read-only mapping; .to(copy=true) copies, so nothing writes it.
    return found.to(device_, dtype_, /*non_blocking=*/false, /*copy=*/true).contiguous();
  }

 private:
  const WeightSource& source_;
  at::Device device_;
  at::ScalarType dtype_;
};

// HF's inverse frequencies, computed in float32 the way transformers does, with Llama-3.1's
// wavelength-dependent rescaling when rope_scaling.rope_type is llama3.
// A GGUF gives Llama-3.1's rescaling as llama.cpp's divisors (rope_freqs), the same numbers.
at::Tensor inverseFrequencies(const ModelConfig& c, const WeightLoader& w) {
  const auto dim = static_cast<double>(c.headDim);
  at::Tensor exponents = at::arange(0, c.headDim, 2, at::kLong).to(at::kFloat) / dim;
  at::Tensor inv = 1.0 / at::pow(c.ropeTheta, exponents);
  if (c.ropeScaling.type == "linear") return inv / c.ropeScaling.factor;
  if (c.ropeScaling.type == "rope_freqs") return inv / w.get("rope_freqs", {c.headDim / 2});
  if (c.ropeScaling.type != "llama3") return inv;
  const RopeScaling& s = c.ropeScaling;
  const double oldContext = static_cast<double>(s.originalMaxPosition);
  const double lowWavelen = oldContext / s.lowFreqFactor;
  const double highWavelen = oldContext / s.highFreqFactor;
  const at::Tensor wavelen = 2 * M_PI / inv;
  at::Tensor scaled = at::where(wavelen > lowWavelen, inv / s.factor, inv);
  const at::Tensor smooth =
      (oldContext / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
  const at::Tensor smoothed = (1 - smooth) * scaled / s.factor + smooth * scaled;
  const at::Tensor medium = (wavelen >= highWavelen).logical_and(wavelen <= lowWavelen);
  return at::where(medium, smoothed, scaled);
}

at::Tensor rotateHalf(const at::Tensor& x) {
  const auto half = x.size(-1) / 2;
  return at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

Transformer::Transformer(const ModelConfig& config, const WeightSource& weights, at::Device device,
                         at::ScalarType dtype, WeightFormat format)
    : config_(config), device_(device), dtype_(dtype), format_(format) {
  const WeightLoader w(weights, device, dtype);
  const auto linear = [&](const at::Tensor& weight, WeightFormat f) {
    return Linear::make(weight, f, device, dtype);
  };
  const WeightFormat ends = format == WeightFormat::Float ? format : WeightFormat::Int8;
  const auto H = config.hiddenSize, I = config.intermediateSize, D = config.headDim;
  const auto q = config.heads * D, kv = config.kvHeads * D;
  embed_ = linear(w.get("model.embed_tokens.weight", {config.vocabSize, H}), ends);
  finalNorm_ = w.get("model.norm.weight", {H});
  lmHead_ = embed_;
  if (!config.tieWordEmbeddings)  // some tied checkpoints omit the flag and the head
    if (const at::Tensor head = w.optional("lm_head.weight", {config.vocabSize, H}); head.defined())
      lmHead_ = linear(head, ends);
  for (std::int64_t i = 0; i < config.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    Layer l;
    l.inputNorm = w.get(p + "input_layernorm.weight", {H});
    l.postNorm = w.get(p + "post_attention_layernorm.weight", {H});
    // q, k and v as one [q + 2 kv, H] matrix and gate and up as one [2 I, H]: one matrix product
    // each instead of three and two, which is most of the decode step's dispatch overhead.
    l.qkv = linear(at::cat({w.get(p + "self_attn.q_proj.weight", {q, H}),
                            w.get(p + "self_attn.k_proj.weight", {kv, H}),
                            w.get(p + "self_attn.v_proj.weight", {kv, H})}),
                   format);
    if (config.attentionBias)
      l.qkvBias = at::cat({w.get(p + "self_attn.q_proj.bias", {q}),
                           w.get(p + "self_attn.k_proj.bias", {kv}),
                           w.get(p + "self_attn.v_proj.bias", {kv})});
    l.o = linear(w.get(p + "self_attn.o_proj.weight", {H, q}), format);
    if (config.qkNorm) {
      l.qNorm = w.get(p + "self_attn.q_norm.weight", {D});
      l.kNorm = w.get(p + "self_attn.k_norm.weight", {D});
    }
    l.gateUp = linear(at::cat({w.get(p + "mlp.gate_proj.weight", {I, H}),
                               w.get(p + "mlp.up_proj.weight", {I, H})}),
                      format);
    l.down = linear(w.get(p + "mlp.down_proj.weight", {H, I}), format);
    layers_.push_back(std::move(l));
  }
  const WeightLoader cpuFloat(weights, at::Device(at::kCPU), at::kFloat);
  invFreq_ = inverseFrequencies(config, cpuFloat).to(device);
}

// As transformers' LlamaRMSNorm: normalise in float32, scale in the model's dtype.
at::Tensor Transformer::rmsNorm(const at::Tensor& x, const at::Tensor& weight) const {
  const at::Tensor x32 = x.to(at::kFloat);
  const at::Tensor normed = x32 * at::rsqrt(x32.pow(2).mean(-1, true) + config_.rmsEps);
  return weight * normed.to(x.scalar_type());
}

void Transformer::appendToCache(KVCache& cache, std::int64_t layer, const at::Tensor& k,
                                const at::Tensor& v) const {
  at::Tensor& keys = cache.keys[layer];
  at::Tensor& values = cache.values[layer];
  const auto needed = cache.length + k.size(2);
  if (!keys.defined() || keys.size(2) < needed) {
    // Grow geometrically so decoding copies the cache O(log n) times, not every step.
    const auto capacity = std::max<std::int64_t>(needed, keys.defined() ? 2 * keys.size(2) : 256);
    at::Tensor bigger = at::empty({k.size(0), k.size(1), capacity, k.size(3)}, k.options());
    at::Tensor biggerV = at::empty_like(bigger);
    if (keys.defined() && cache.length > 0) {
      bigger.narrow(2, 0, cache.length).copy_(keys.narrow(2, 0, cache.length));
      biggerV.narrow(2, 0, cache.length).copy_(values.narrow(2, 0, cache.length));
    }
    keys = bigger;
    values = biggerV;
  }
  keys.narrow(2, cache.length, k.size(2)).copy_(k);
  values.narrow(2, cache.length, v.size(2)).copy_(v);
}

at::Tensor Transformer::attention(const Layer& l, const at::Tensor& x, std::int64_t layerIndex,
                                  KVCache& cache, const at::Tensor& cos,
                                  const at::Tensor& sin) const {
  const auto B = x.size(0), T = x.size(1), D = config_.headDim;
  const auto H = config_.heads, KV = config_.kvHeads;
  const at::Tensor qkv = l.qkv(x, l.qkvBias);
  at::Tensor q = qkv.narrow(-1, 0, H * D).view({B, T, H, D});
  at::Tensor k = qkv.narrow(-1, H * D, KV * D).view({B, T, KV, D});
  at::Tensor v = qkv.narrow(-1, (H + KV) * D, KV * D).view({B, T, KV, D});
  if (config_.qkNorm) {
    q = rmsNorm(q, l.qNorm);
    k = rmsNorm(k, l.kNorm);
  }
  q = q.transpose(1, 2);
  k = k.transpose(1, 2);
  v = v.transpose(1, 2);
  q = q * cos + rotateHalf(q) * sin;
  k = k * cos + rotateHalf(k) * sin;
  appendToCache(cache, layerIndex, k, v);
  const auto total = cache.length + T;
  at::Tensor keys = cache.keys[layerIndex].narrow(2, 0, total);
  at::Tensor values = cache.values[layerIndex].narrow(2, 0, total);
  const auto groups = H / KV;
  at::Tensor out;
  if (T == 1) {
    // One new token per row: the query heads that share a key/value head (HF's
    // repeat_interleave order: heads g*groups .. g*groups + groups - 1 use kv head g) attend as
    // one [groups, D] x [D, total] product, with no copy of the cache per group.
    const at::Tensor grouped = q.reshape({B, KV, groups, D});
    const at::Tensor scores =
        at::matmul(grouped, keys.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(D)));
    out = at::matmul(at::softmax(scores, -1, at::kFloat).to(values.scalar_type()), values)
              .view({B, H, 1, D});
  } else {
    if (groups > 1) {
      keys = keys.repeat_interleave(groups, 1);
      values = values.repeat_interleave(groups, 1);
    }
    // Query i (absolute position length + i) sees keys 0 .. length + i.
    std::optional<at::Tensor> mask;
    if (cache.length > 0) {
      const at::Tensor qPos =
          at::arange(cache.length, total, at::TensorOptions().dtype(at::kLong).device(device_));
      const at::Tensor kPos =
          at::arange(0, total, at::TensorOptions().dtype(at::kLong).device(device_));
      mask = kPos.unsqueeze(0) <= qPos.unsqueeze(1);
    }
    out = at::scaled_dot_product_attention(q, keys, values, mask, 0.0,
                                           /*is_causal=*/cache.length == 0);
  }
  return l.o(out.transpose(1, 2).reshape({B, T, H * D}));
}

at::Tensor Transformer::forward(const at::Tensor& tokens, KVCache& cache, bool allPositions) const {
  // No autograd bookkeeping (version counters, views tracked for backward): a decode step is a few
  // thousand small ops, where that per-op cost is a large share of the step.
  const c10::InferenceMode inference;
  const auto T = tokens.size(1);
  if (cache.keys.empty()) {
    cache.keys.resize(layers_.size());
    cache.values.resize(layers_.size());
  }
  const at::Tensor positions = at::arange(cache.length, cache.length + T,
                                          at::TensorOptions().dtype(at::kFloat).device(device_));
  const at::Tensor freqs = positions.unsqueeze(1) * invFreq_.unsqueeze(0);
  const at::Tensor emb = at::cat({freqs, freqs}, -1);
  const at::Tensor cos = emb.cos().to(dtype_), sin = emb.sin().to(dtype_);

  at::Tensor x = embed_.rows(tokens.to(device_)).to(dtype_);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const Layer& l = layers_[i];
    x = x + attention(l, rmsNorm(x, l.inputNorm), static_cast<std::int64_t>(i), cache, cos, sin);
    const at::Tensor h = rmsNorm(x, l.postNorm);
    const at::Tensor gateUp = l.gateUp(h);
    const auto I = config_.intermediateSize;
    x = x + l.down(at::silu(gateUp.narrow(-1, 0, I)) * gateUp.narrow(-1, I, I));
  }
  cache.length += T;
  if (!allPositions) x = x.select(1, T - 1);
  return lmHead_(rmsNorm(x, finalNorm_)).to(at::kFloat);
}

}  // namespace crucible::llm
