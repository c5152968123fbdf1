// The product of float32 activations with int8 weights that have one float32 scale per output
// channel, accumulated and returned in float32, on the CPU. For a few rows (decode: one per
// candidate) each weight row is read once, converted in registers and used for every activation
// row (AVX-512 or AVX2 where the CPU has them); for more rows (prefill) the weights are
// dequantised a slice at a time into float32 and multiplied by BLAS. ATen's _weight_int8pack_mm
// takes float32 only through a slow path and rounds its bf16 fast path's result to bf16: an output
// head's logits rounded to steps of 0.125 decide near-ties in greedy decoding.
#pragma once

#include <ATen/ATen.h>

namespace crucible::llm {

// x: float32 [M, K] contiguous; weight: int8 [N, K] contiguous; scales: float32 [N]. -> [M, N].
at::Tensor int8Matmul(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& scales);

}  // namespace crucible::llm
