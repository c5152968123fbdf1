#include "core/llm/torch/int8_matmul.h"

#include <ATen/Parallel.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace crucible::llm {
namespace {

constexpr std::int64_t kFewRows = 4;       // up to this many activation rows: the GEMV kernel
constexpr std::int64_t kSliceRows = 2048;  // weight rows dequantised at a time for BLAS
constexpr std::int64_t kGrain = 64;        // weight rows per parallel task, at least

// sum_k row[k] x[k] over k in [0, K).
using Dot = float (*)(const std::int8_t* row, const float* x, std::int64_t K);

float dotScalar(const std::int8_t* row, const float* x, std::int64_t K) {
  float sum = 0;
  for (std::int64_t k = 0; k < K; ++k) sum += static_cast<float>(row[k]) * x[k];
  return sum;
}

#if defined(__x86_64__)
// GCC 12 warns about its own avx512fintrin.h (_mm512_setzero_ps, _mm512_reduce_add_ps).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
__attribute__((target("avx512f"))) float dotAvx512(const std::int8_t* row, const float* x,
                                                   std::int64_t K) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  std::int64_t k = 0;
  // 16 int8 weights from row + k as floats (a lambda would not carry the target attribute)
#define CRUCIBLE_LOAD16(k) \
  _mm512_cvtepi32_ps(      \
      _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + (k)))))
  for (; k + 32 <= K; k += 32) {  // two chains, so that the FMA latency overlaps
    acc0 = _mm512_fmadd_ps(CRUCIBLE_LOAD16(k), _mm512_loadu_ps(x + k), acc0);
    acc1 = _mm512_fmadd_ps(CRUCIBLE_LOAD16(k + 16), _mm512_loadu_ps(x + k + 16), acc1);
  }
  for (; k + 16 <= K; k += 16)
    acc0 = _mm512_fmadd_ps(CRUCIBLE_LOAD16(k), _mm512_loadu_ps(x + k), acc0);
#undef CRUCIBLE_LOAD16
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) + dotScalar(row + k, x + k, K - k);
}
#pragma GCC diagnostic pop

__attribute__((target("avx2,fma"))) float dotAvx2(const std::int8_t* row, const float* x,
                                                  std::int64_t K) {
  __m256 acc = _mm256_setzero_ps();
  std::int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    const __m256 w = _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + k))));
    acc = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + k), acc);
  }
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  const __m128 pair = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1))) +
         dotScalar(row + k, x + k, K - k);
}
#endif

// The widest the CPU has; CRUCIBLE_MODEL_INT8_KERNEL=avx2|scalar picks a narrower one (tests).
Dot pickDot() {
  const char* env = std::getenv("CRUCIBLE_MODEL_INT8_KERNEL");
  const std::string wanted = env ? env : "";
  if (wanted == "scalar") return dotScalar;
#if defined(__x86_64__)
  if (wanted != "avx2" && __builtin_cpu_supports("avx512f")) return dotAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return dotAvx2;
#endif
  return dotScalar;
}

}  // namespace

at::Tensor int8Matmul(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& scales) {
  const auto M = x.size(0), K = x.size(1), N = weight.size(0);
  at::Tensor y = at::empty({M, N}, x.options());
  if (M > kFewRows) {
    for (std::int64_t n0 = 0; n0 < N; n0 += kSliceRows) {
      const auto rows = std::min(kSliceRows, N - n0);
      const at::Tensor slice =
          weight.narrow(0, n0, rows).to(at::kFloat) * scales.narrow(0, n0, rows).unsqueeze(1);
      y.narrow(1, n0, rows).copy_(at::mm(x, slice.t()));
    }
    return y;
  }
  static const Dot dot = pickDot();
  const float* xp = x.const_data_ptr<float>();
  const auto* wp = weight.const_data_ptr<std::int8_t>();
  const float* sp = scales.const_data_ptr<float>();
  float* yp = y.mutable_data_ptr<float>();
  at::parallel_for(0, N, kGrain, [&](std::int64_t n0, std::int64_t n1) {
    for (std::int64_t n = n0; n < n1; ++n)
      for (std::int64_t m = 0; m < M; ++m)  // the weight row stays in L1 for every activation row
        yp[m * N + n] = dot(wp + n * K, xp + m * K, K) * sp[n];
  });
  return y;
}

}  // namespace crucible::llm
