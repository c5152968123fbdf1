#include "core/llm/model_config.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/llm/model_error.h"

namespace crucible::llm {

ModelConfig ModelConfig::fromFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ModelError(path.string() + ": cannot open");
  try {
    return fromJson(nlohmann::json::parse(in), path.string());
  } catch (const nlohmann::json::parse_error& e) {
    throw ModelError(path.string() + ": not JSON: " + e.what());
  }
}

ModelConfig ModelConfig::fromJson(const nlohmann::json& j, const std::string& source) {
  ModelConfig c;
  try {
    const auto archs = j.value("architectures", nlohmann::json::array());
    c.architecture = archs.empty() ? j.value("model_type", "") : archs[0].get<std::string>();
    const bool qwen2 = c.architecture == "Qwen2ForCausalLM";
    const bool qwen3 = c.architecture == "Qwen3ForCausalLM";
    if (!qwen2 && !qwen3 && c.architecture != "LlamaForCausalLM")
      throw ModelError(source + ": unsupported architecture '" + c.architecture +
                       "' (supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM)");
    c.vocabSize = j.at("vocab_size");
    c.hiddenSize = j.at("hidden_size");
    c.intermediateSize = j.at("intermediate_size");
    c.layers = j.at("num_hidden_layers");
    c.heads = j.at("num_attention_heads");
    c.kvHeads = j.value("num_key_value_heads", c.heads);
    const auto headDim = j.value("head_dim", nlohmann::json());
    c.headDim = headDim.is_number() ? headDim.get<std::int64_t>() : c.hiddenSize / c.heads;
    c.maxPositions = j.value("max_position_embeddings", 4096);
    c.rmsEps = j.value("rms_norm_eps", 1e-6);
    c.ropeTheta = j.value("rope_theta", 10000.0);
    c.attentionBias = qwen2 || j.value("attention_bias", false);
    c.qkNorm = qwen3;
    c.tieWordEmbeddings = j.value("tie_word_embeddings", false);
    const auto dtype = j.value("torch_dtype", nlohmann::json());
    c.dtype = dtype.is_string() ? dtype.get<std::string>() : j.value("dtype", "float32");
    const auto rs = j.value("rope_scaling", nlohmann::json());
    if (rs.is_object()) {
      c.ropeScaling.type = rs.value("rope_type", rs.value("type", ""));
      if (c.ropeScaling.type == "default") c.ropeScaling.type.clear();
      if (!c.ropeScaling.type.empty() && c.ropeScaling.type != "llama3" &&
          c.ropeScaling.type != "linear")
        throw ModelError(source + ": unsupported rope_scaling type '" + c.ropeScaling.type + "'");
      c.ropeScaling.factor = rs.value("factor", 1.0);
      c.ropeScaling.lowFreqFactor = rs.value("low_freq_factor", 1.0);
      c.ropeScaling.highFreqFactor = rs.value("high_freq_factor", 4.0);
      c.ropeScaling.originalMaxPosition = rs.value("original_max_position_embeddings", 8192);
    }
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(source + ": " + e.what());
  }
  if (c.heads <= 0 || c.kvHeads <= 0 || c.heads % c.kvHeads != 0 || c.headDim <= 0 || c.layers <= 0)
    throw ModelError(source + ": inconsistent head counts or layer count");
  return c;
}

std::int64_t ModelConfig::parameterCount() const {
  const std::int64_t q = heads * headDim, kv = kvHeads * headDim;
  std::int64_t layer = hiddenSize * (q + 2 * kv) + q * hiddenSize +
                       3 * hiddenSize * intermediateSize + 2 * hiddenSize;
  if (attentionBias) layer += q + 2 * kv;
  if (qkNorm) layer += 2 * headDim;
  const std::int64_t embed = vocabSize * hiddenSize;
  return embed * (tieWordEmbeddings ? 1 : 2) + layers * layer + hiddenSize;
}

void to_json(nlohmann::json& j, const ModelConfig& c) {
  j = {{"architecture", c.architecture},
       {"vocab_size", c.vocabSize},
       {"hidden_size", c.hiddenSize},
       {"intermediate_size", c.intermediateSize},
       {"layers", c.layers},
       {"heads", c.heads},
       {"kv_heads", c.kvHeads},
       {"head_dim", c.headDim},
       {"context_length", c.maxPositions},
       {"rms_eps", c.rmsEps},
       {"rope_theta", c.ropeTheta},
       {"rope_scaling", c.ropeScaling.type},
       {"attention_bias", c.attentionBias},
       {"qk_norm", c.qkNorm},
       {"tie_word_embeddings", c.tieWordEmbeddings},
       {"dtype", c.dtype},
       {"parameters", c.parameterCount()}};
}

}  // namespace crucible::llm
