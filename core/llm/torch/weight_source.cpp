#include "core/llm/torch/weight_source.h"

#include <map>

#include "core/llm/gguf.h"
#include "core/llm/gguf_model.h"
#include "core/llm/model_error.h"
#include "core/llm/safetensors.h"

namespace crucible::llm {
namespace {

// from_blob over the read-only mapping: callers copy (.to(..., copy=true)) and never write it.
at::Tensor mapped(const std::byte* data, std::vector<std::int64_t> shape, at::ScalarType type) {
  return at::from_blob(const_cast<std::byte*>(data), shape, at::TensorOptions().dtype(type));
}

class SafetensorsWeights final : public WeightSource {
 public:
  explicit SafetensorsWeights(const std::filesystem::path& folder) : folder_(folder) {}
  at::Tensor find(const std::string& name) const override {
    const TensorView* view = folder_.find(name);
    if (!view) return {};
    return mapped(view->data, view->shape, scalarType(view->dtype, name));
  }

 private:
  static at::ScalarType scalarType(const std::string& dtype, const std::string& name) {
    if (dtype == "F32") return at::kFloat;
    if (dtype == "F16") return at::kHalf;
    if (dtype == "BF16") return at::kBFloat16;
    throw ModelError("tensor '" + name + "' has dtype " + dtype + " (supported: F32, F16, BF16)");
  }
  SafetensorsFolder folder_;
};

class GgufWeights final : public WeightSource {
 public:
  explicit GgufWeights(const ModelFolder& model)
      : file_(model.gguf), config_(model.config), path_(model.path) {
    for (const auto& [name, tensor] : file_->tensors()) {
      if (auto hf = huggingFaceTensorName(name)) byName_[*hf] = &tensor;
      if (name == "rope_freqs.weight") byName_["rope_freqs"] = &tensor;
    }
  }

  at::Tensor find(const std::string& name) const override {
    const auto it = byName_.find(name);
    if (it == byName_.end()) return {};
    const GgufTensor& t = *it->second;
    const std::vector<std::int64_t> shape(t.dims.rbegin(), t.dims.rend());
    const auto heads = permutedHeads(name);
    if (!heads) {
      if (t.type == GgmlType::F32) return mapped(t.data, shape, at::kFloat);
      if (t.type == GgmlType::F16) return mapped(t.data, shape, at::kHalf);
      if (t.type == GgmlType::BF16) return mapped(t.data, shape, at::kBFloat16);
    }
    at::Tensor out = at::empty(shape, at::kFloat);
    try {
      dequantizeInto(t, out.data_ptr<float>());
    } catch (const ModelError& e) {
      throw ModelError(path_.string() + ": " + e.what());
    }
    if (heads) {
      if (shape.front() % (2 * *heads) != 0)
        throw ModelError(path_.string() + ": tensor '" + t.name + "' has " +
                         std::to_string(shape.front()) + " rows for " + std::to_string(*heads) +
                         " heads");
      unpermuteQueryKey(out.data_ptr<float>(), shape.front(), out.numel() / shape.front(), *heads);
    }
    return out;
  }

 private:
  // The heads whose rows llama.cpp permuted in this tensor, if it is one of those.
  std::optional<std::int64_t> permutedHeads(const std::string& name) const {
    if (config_.architecture != "LlamaForCausalLM") return std::nullopt;
    const auto ends = [&](std::string_view suffix) {
      return name.size() >= suffix.size() &&
             name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends("self_attn.q_proj.weight") || ends("self_attn.q_proj.bias")) return config_.heads;
    if (ends("self_attn.k_proj.weight") || ends("self_attn.k_proj.bias")) return config_.kvHeads;
    return std::nullopt;
  }

  std::shared_ptr<const GgufFile> file_;
  ModelConfig config_;
  std::filesystem::path path_;
  std::map<std::string, const GgufTensor*> byName_;
};

}  // namespace

std::unique_ptr<WeightSource> makeWeightSource(const ModelFolder& model) {
  if (model.gguf) return std::make_unique<GgufWeights>(model);
  return std::make_unique<SafetensorsWeights>(model.path);
}

}  // namespace crucible::llm
