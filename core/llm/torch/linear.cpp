#include "core/llm/torch/linear.h"

#include <algorithm>
#include <stdexcept>

#include "core/llm/model_error.h"
#include "core/llm/torch/int8_matmul.h"

namespace crucible::llm {
namespace {

constexpr std::int64_t kGroup = 32;  // int4 group along the input: a GGUF Q4 block's length

bool fitsInt4(std::int64_t out, std::int64_t in) {
  return out % 16 == 0 && in % kGroup == 0;
}

// Symmetric, per output channel: w ~ q * scale, q in [-127, 127], float32 scales. A slice of rows
// at a time, so that a 49k-row embedding's float temporaries do not add to the load's peak memory.
void quantizeInt8(const at::Tensor& w, at::Tensor& q, at::Tensor& scales) {
  constexpr std::int64_t kSlice = 4096;
  q = at::empty(w.sizes(), at::kChar);
  scales = at::empty({w.size(0)}, at::kFloat);
  for (std::int64_t r = 0; r < w.size(0); r += kSlice) {
    const at::Tensor rows = w.narrow(0, r, std::min(kSlice, w.size(0) - r));
    const at::Tensor s = (rows.abs().amax(1) / 127.0).clamp_min(1e-12);
    scales.narrow(0, r, rows.size(0)).copy_(s);
    q.narrow(0, r, rows.size(0)).copy_(at::round(rows / s.unsqueeze(1)).clamp_(-127, 127));
  }
}

// Asymmetric, per group of 32 inputs: w ~ (q - 8) * scale + zero, q in [0, 15], the kernel's
// formula (zero = the group's minimum + 8 scales). A GGUF Q4_0/Q4_1 block is such a group, so
// its weights come back exactly up to the bf16 rounding of scale and zero.
void quantizeInt4(const at::Tensor& w, at::Tensor& packed, at::Tensor& scalesAndZeros) {
  const auto out = w.size(0), in = w.size(1);
  const at::Tensor groups = w.view({out, in / kGroup, kGroup});
  const at::Tensor lo = groups.amin(-1), hi = groups.amax(-1);
  const at::Tensor scale = ((hi - lo) / 15.0).clamp_min(1e-12).to(at::kBFloat16);
  const at::Tensor zero = (lo + 8.0 * scale.to(at::kFloat)).to(at::kBFloat16);
  const at::Tensor s = scale.to(at::kFloat).unsqueeze(-1);
  const at::Tensor base = zero.to(at::kFloat).unsqueeze(-1) - 8.0 * s;
  const at::Tensor q = at::round((groups - base) / s).clamp(0, 15).to(at::kInt).view({out, in});
  packed = at::_convert_weight_to_int4pack_for_cpu(q, /*innerKTiles=*/1);
  scalesAndZeros = at::stack({scale, zero}, -1).transpose(0, 1).contiguous();
}

}  // namespace

Linear Linear::make(const at::Tensor& weight, WeightFormat format, at::Device device,
                    at::ScalarType dtype) {
  Linear l;
  l.out_ = weight.size(0);
  l.in_ = weight.size(1);
  if (format == WeightFormat::Int4 && !fitsInt4(l.out_, l.in_)) format = WeightFormat::Int8;
  l.format_ = format;
  if (format == WeightFormat::Float) {
    l.weight_ = weight.to(device, dtype).contiguous();
    return l;
  }
  if (!device.is_cpu())
    throw ModelError("dtype " + formatName(format, dtype) +
                     ": weight-only quantisation runs on the CPU only");
  const at::Tensor w = weight.to(at::kFloat).contiguous();
  if (format == WeightFormat::Int8)
    quantizeInt8(w, l.weight_, l.scales_);
  else
    quantizeInt4(w, l.weight_, l.scales_);
  return l;
}

at::Tensor Linear::operator()(const at::Tensor& x, const at::Tensor& bias) const {
  if (format_ == WeightFormat::Float) return at::linear(x, weight_, bias);
  std::vector<std::int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = out_;
  const at::Tensor x2 = x.reshape({-1, in_});
  const at::Tensor y = format_ == WeightFormat::Int8
                           ? int8Matmul(x2.to(at::kFloat).contiguous(), weight_, scales_)
                           : at::_weight_int4pack_mm_for_cpu(x2.to(at::kBFloat16).contiguous(),
                                                             weight_, kGroup, scales_);
  at::Tensor out = y.to(x.scalar_type()).view(shape);
  return bias.defined() ? out + bias : out;
}

at::Tensor Linear::rows(const at::Tensor& ids) const {
  if (format_ == WeightFormat::Float) return at::embedding(weight_, ids);
  if (format_ != WeightFormat::Int8) throw std::logic_error("rows of an int4 weight");
  const at::Tensor flat = ids.reshape({-1});
  std::vector<std::int64_t> shape(ids.sizes().begin(), ids.sizes().end());
  shape.push_back(in_);
  return (weight_.index_select(0, flat).to(at::kFloat) *
          scales_.index_select(0, flat).to(at::kFloat).unsqueeze(1))
      .view(shape);
}

std::int64_t Linear::bytes() const {
  const auto size = [](const at::Tensor& t) { return t.defined() ? t.nbytes() : 0; };
  return static_cast<std::int64_t>(size(weight_) + size(scales_));
}

std::string formatName(WeightFormat format, at::ScalarType floatDtype) {
  if (format == WeightFormat::Int8) return "int8";
  if (format == WeightFormat::Int4) return "int4";
  if (floatDtype == at::kHalf) return "float16";
  if (floatDtype == at::kBFloat16) return "bfloat16";
  if (floatDtype == at::kFloat) return "float32";
  return c10::toString(floatDtype);
}

}  // namespace crucible::llm
