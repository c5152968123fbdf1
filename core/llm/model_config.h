// A decoder-only model's shape from a Hugging Face config.json: the one parametrised decoder that
// covers Llama (incl. Llama-3.1 rope scaling), Qwen2 (q/k/v bias) and Qwen3 (q/k norms).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace crucible::llm {

struct RopeScaling {
  // "" (none), "llama3", "linear" (positions divided by factor), or "rope_freqs" (a GGUF's
  // rope_freqs tensor holds llama.cpp's per-frequency divisors, Llama-3.1's scaling precomputed)
  std::string type;
  double factor = 1.0;
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  std::int64_t originalMaxPosition = 8192;
};

struct ModelConfig {
  std::string architecture;  // LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM
  std::int64_t vocabSize = 0;
  std::int64_t hiddenSize = 0;
  std::int64_t intermediateSize = 0;
  std::int64_t layers = 0;
  std::int64_t heads = 0;
  std::int64_t kvHeads = 0;
  std::int64_t headDim = 0;
  std::int64_t maxPositions = 0;
  double rmsEps = 1e-6;
  double ropeTheta = 10000.0;
  RopeScaling ropeScaling;
  bool attentionBias = false;  // bias on q, k, v (Qwen2 always; Llama when attention_bias)
  bool qkNorm = false;         // RMSNorm per head on q and k (Qwen3)
  bool tieWordEmbeddings = false;
  std::string dtype;  // torch_dtype as stored: float32, float16, bfloat16

  // `source` names the file in error messages; throws ModelError.
  static ModelConfig fromJson(const nlohmann::json& j, const std::string& source);
  static ModelConfig fromFile(const std::filesystem::path& path);
  std::int64_t parameterCount() const;
};
void to_json(nlohmann::json& j, const ModelConfig& c);

}  // namespace crucible::llm
