#include "core/llm/torch/torch_decoder.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "core/llm/gguf.h"
#include "core/llm/model_error.h"
#include "core/llm/torch/transformer.h"

namespace crucible::llm {
namespace {

at::Device parseDevice(const std::string& name) {
  if (name == "cpu") return at::Device(at::kCPU);
  if (name.rfind("cuda", 0) == 0) {
    if (!at::hasCUDA()) throw ModelError("device '" + name + "': no CUDA device available");
    return at::Device(name);
  }
  throw ModelError("device '" + name + "' is not cpu, cuda or cuda:N");
}

// What a request's dtype means: the dtype the model computes in and the format of its linear
// layers' weights.
struct Precision {
  at::ScalarType dtype = at::kFloat;
  WeightFormat format = WeightFormat::Float;
};

// The weight-only format that keeps about what a quantised GGUF kept: int4 for 4-bit blocks (a
// Q4_0/Q4_1 block, or a Q4_K sub-block, is one int4 group of 32), int8 for wider ones; nothing
// for float files.
std::optional<WeightFormat> ggufFormat(const ModelFolder& folder) {
  if (!folder.gguf) return std::nullopt;
  const auto& tensors = folder.gguf->tensors();
  const auto q = tensors.find("blk.0.attn_q.weight");
  if (q == tensors.end()) return std::nullopt;
  switch (q->second.type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
      return std::nullopt;
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q4_K:
      return WeightFormat::Int4;
    default:
      return WeightFormat::Int8;
  }
}

// auto: on the CPU, a quantised GGUF as int4/int8 weights (ggufFormat), anything else float32; on
// CUDA the checkpoint's dtype.
Precision parsePrecision(const std::string& name, const ModelFolder& folder, at::Device device) {
  std::string chosen = name;
  if (name == "auto") {
    if (!device.is_cpu()) {
      chosen = folder.config.dtype;
    } else if (const auto format = ggufFormat(folder)) {
      return {at::kFloat, *format};
    } else {
      chosen = "float32";
    }
  }
  if (chosen == "float32") return {at::kFloat, WeightFormat::Float};
  if (chosen == "float16") return {at::kHalf, WeightFormat::Float};
  if (chosen == "bfloat16") return {at::kBFloat16, WeightFormat::Float};
  if (chosen == "int8" || chosen == "int4") {
    if (!device.is_cpu())
      throw ModelError("dtype '" + chosen + "': weight-only quantisation runs on the CPU only");
    return {at::kFloat, chosen == "int8" ? WeightFormat::Int8 : WeightFormat::Int4};
  }
  throw ModelError("dtype '" + name + "' is not auto, float32, float16, bfloat16, int8 or int4");
}

std::vector<float> toVector(const at::Tensor& t) {
  const at::Tensor cpu = t.to(at::kCPU, at::kFloat).contiguous();
  return std::vector<float>(cpu.data_ptr<float>(), cpu.data_ptr<float>() + cpu.numel());
}

class TorchDecoder final : public Decoder {
 public:
  TorchDecoder(const ModelFolder& folder, at::Device device, Precision precision)
      : model_(folder.config, *makeWeightSource(folder), device, precision.dtype,
               precision.format) {}

  std::int64_t vocabSize() const override { return model_.config().vocabSize; }

  std::vector<float> prefill(const std::vector<int>& ids, int rows) override {
    const c10::InferenceMode inference;
    cache_ = KVCache{};
    const at::Tensor logits = model_.forward(tokens({ids}), cache_);
    for (std::size_t l = 0; l < cache_.keys.size(); ++l) {
      cache_.keys[l] = cache_.keys[l].narrow(2, 0, cache_.length).repeat({rows, 1, 1, 1});
      cache_.values[l] = cache_.values[l].narrow(2, 0, cache_.length).repeat({rows, 1, 1, 1});
    }
    return toVector(logits[0]);
  }

  std::vector<float> step(const std::vector<int>& next) override {
    std::vector<std::vector<int>> column;
    for (int t : next) column.push_back({t});
    return toVector(model_.forward(tokens(column), cache_));
  }

  void keepRows(const std::vector<int>& rows) override {
    const c10::InferenceMode inference;
    const at::Tensor index =
        at::tensor(std::vector<std::int64_t>(rows.begin(), rows.end()), at::kLong)
            .to(model_.device());
    for (std::size_t l = 0; l < cache_.keys.size(); ++l) {
      cache_.keys[l] = cache_.keys[l].index_select(0, index);
      cache_.values[l] = cache_.values[l].index_select(0, index);
    }
  }

  std::vector<std::vector<float>> logits(const std::vector<int>& ids) override {
    KVCache cache;
    const at::Tensor all = model_.forward(tokens({ids}), cache, true)[0];
    std::vector<std::vector<float>> out;
    for (std::int64_t i = 0; i < all.size(0); ++i) out.push_back(toVector(all[i]));
    return out;
  }

  nlohmann::json describe() const override {
    return {{"backend", "libtorch"},
            {"device", model_.device().str()},
            {"dtype", formatName(model_.format(), model_.dtype())},
            {"compute_dtype", formatName(WeightFormat::Float, model_.dtype())},
            {"threads", at::get_num_threads()}};
  }

 private:
  at::Tensor tokens(const std::vector<std::vector<int>>& rows) const {
    const auto width = static_cast<std::int64_t>(rows.front().size());
    std::vector<std::int64_t> flat;
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    return at::tensor(flat, at::kLong).view({static_cast<std::int64_t>(rows.size()), width});
  }

  Transformer model_;
  KVCache cache_;
};

// Every core by default (ATen's own default is the physical cores); CRUCIBLE_MODEL_THREADS
// overrides, e.g. for a benchmark on a shared machine.
void useAllCores() {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  if (const char* env = std::getenv("CRUCIBLE_MODEL_THREADS"); env && std::atoi(env) > 0)
    threads = std::atoi(env);
  if (threads > 0 && at::get_num_threads() != threads) at::set_num_threads(threads);
}

}  // namespace

std::unique_ptr<Decoder> makeTorchDecoder(const ModelFolder& folder, const std::string& device,
                                          const std::string& dtype) {
  const at::Device dev = parseDevice(device);
  if (dev.is_cpu()) useAllCores();
  return std::make_unique<TorchDecoder>(folder, dev, parsePrecision(dtype, folder, dev));
}

}  // namespace crucible::llm
