// The decoder of the Llama / Qwen2 / Qwen3 families on ATen: RMSNorm, rotate_half RoPE (with
// Llama-3.1 scaling), grouped-query attention with optional q/k/v bias and per-head q/k norms,
// SwiGLU MLP, tied or separate output head; a KV cache per batch row.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "core/llm/model_config.h"
#include "core/llm/torch/linear.h"
#include "core/llm/torch/weight_source.h"

namespace crucible::llm {

// Keys and values of every layer, [batch, kv_heads, capacity, head_dim]; `length` positions used.
struct KVCache {
  std::vector<at::Tensor> keys, values;
  std::int64_t length = 0;
};

class Transformer {
 public:
  // Copies the weights out of the mapped checkpoint into `dtype` on `device`. With a quantised
  // `format` the linear layers keep int8 or int4 weights (see Linear) and `dtype` is what the rest
  // computes in; the embedding and output head are then int8 in both (as llama.cpp's Q4 files keep
  // them at 8 bits).
  Transformer(const ModelConfig& config, const WeightSource& weights, at::Device device,
              at::ScalarType dtype, WeightFormat format = WeightFormat::Float);

  // tokens: [batch, T] int64 positions cache.length ... ; appends to the cache. Returns float32
  // logits [batch, T, vocab] (allPositions) or [batch, vocab] for the last position only.
  at::Tensor forward(const at::Tensor& tokens, KVCache& cache, bool allPositions = false) const;

  const ModelConfig& config() const { return config_; }
  at::Device device() const { return device_; }
  at::ScalarType dtype() const { return dtype_; }
  WeightFormat format() const { return format_; }

 private:
  struct Layer {
    at::Tensor inputNorm, postNorm, qkvBias, qNorm, kNorm;
    Linear qkv, o;        // q, k, v stacked: [(heads + 2 kv) * D, H]
    Linear gateUp, down;  // gate and up stacked: [2 I, H]
  };
  at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight) const;
  at::Tensor attention(const Layer& layer, const at::Tensor& x, std::int64_t layerIndex,
                       KVCache& cache, const at::Tensor& cos, const at::Tensor& sin) const;
  void appendToCache(KVCache& cache, std::int64_t layer, const at::Tensor& k,
                     const at::Tensor& v) const;

  ModelConfig config_;
  at::Device device_;
  at::ScalarType dtype_;
  WeightFormat format_;
  Linear embed_, lmHead_;
  at::Tensor finalNorm_, invFreq_;
  std::vector<Layer> layers_;
};

}  // namespace crucible::llm
