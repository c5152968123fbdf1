// A linear layer's weight and how its product is computed: a float matrix through at::linear, or
// weight-only quantised on the CPU: int8 per output channel (int8Matmul: float32 activations and
// result) or int4 in groups of 32 along the input (ATen's _weight_int4pack_mm_for_cpu, whose fast
// path takes bfloat16 activations and rounds its result to bfloat16). The quantised products read
// a quarter or an eighth of float32's bytes, which is what bounds decode (one pass over every
// weight per token); the result comes back in the input's dtype.
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace crucible::llm {

enum class WeightFormat { Float, Int8, Int4 };

class Linear {
 public:
  Linear() = default;
  // weight: [out, in] on the CPU, any float dtype. Float keeps it in `dtype` on `device`; Int8 and
  // Int4 quantise it (CPU only); Int4 falls back to Int8 for a shape its kernel cannot take (out
  // not a multiple of 16, in not a multiple of 32).
  static Linear make(const at::Tensor& weight, WeightFormat format, at::Device device,
                     at::ScalarType dtype);

  // x: [..., in] -> [..., out] in x's dtype, plus bias when defined.
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& bias = {}) const;
  // Rows of the weight as float32 (an embedding lookup): ids of any shape -> [..., in].
  at::Tensor rows(const at::Tensor& ids) const;

  WeightFormat format() const { return format_; }
  std::int64_t bytes() const;  // of the weight and its scales

 private:
  WeightFormat format_ = WeightFormat::Float;
  at::Tensor weight_;  // Float: [out, in]; Int8: int8 [out, in]; Int4: the kernel's packing
  at::Tensor scales_;  // Int8: float32 [out]; Int4: bf16 [in / 32, out, 2] (scale, zero)
  std::int64_t in_ = 0, out_ = 0;
};

// The protocol's name: "int8", "int4", or the float dtype's ("float32", "float16", "bfloat16").
std::string formatName(WeightFormat format, at::ScalarType floatDtype);

}  // namespace crucible::llm
