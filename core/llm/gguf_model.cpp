#include "core/llm/gguf_model.h"

#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/llm/gguf.h"
#include "core/llm/model_error.h"
#include "core/llm/pretokenizer.h"

namespace crucible::llm {
namespace {

using nlohmann::json;

// GGUF's token types (llama.cpp's llama_token_type).
constexpr int kTokenUnused = 5, kTokenControl = 3, kTokenUserDefined = 4;

class Metadata {
 public:
  Metadata(const GgufFile& file, std::string source)
      : m_(file.metadata()), source_(std::move(source)) {}
  bool has(const std::string& key) const { return m_.contains(key); }
  const json& at(const std::string& key) const {
    if (!m_.contains(key)) fail("metadata key '" + key + "' is missing");
    return m_.at(key);
  }
  template <typename T>
  T get(const std::string& key) const {
    try {
      return at(key).get<T>();
    } catch (const json::exception& e) {
      fail("metadata key '" + key + "': " + e.what());
    }
  }
  template <typename T>
  T get(const std::string& key, T fallback) const {
    return has(key) ? get<T>(key) : fallback;
  }
  [[noreturn]] void fail(const std::string& what) const { throw ModelError(source_ + ": " + what); }

 private:
  const json& m_;
  std::string source_;
};

struct ArchitectureName {
  const char* gguf;
  const char* huggingFace;
};
constexpr ArchitectureName kArchitectures[] = {
    {"llama", "LlamaForCausalLM"}, {"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"}};

std::string checkpointDtype(GgmlType type) {
  if (type == GgmlType::F32) return "float32";
  if (type == GgmlType::BF16) return "bfloat16";
  return "float16";  // F16 and the quantised types, which llama.cpp computes in half precision
}

ModelConfig configFromGguf(const GgufFile& file, const Metadata& meta) {
  const auto arch = meta.get<std::string>("general.architecture");
  ModelConfig c;
  for (const auto& a : kArchitectures)
    if (arch == a.gguf) c.architecture = a.huggingFace;
  if (c.architecture.empty())
    meta.fail("unsupported architecture '" + arch + "' (supported: llama, qwen2, qwen3)");
  const auto& tensors = file.tensors();
  const auto embed = tensors.find("token_embd.weight");
  if (embed == tensors.end() || embed->second.dims.size() != 2)
    meta.fail("tensor 'token_embd.weight' is missing or not 2-D");
  c.vocabSize = embed->second.dims[1];
  c.hiddenSize = meta.get<std::int64_t>(arch + ".embedding_length");
  c.intermediateSize = meta.get<std::int64_t>(arch + ".feed_forward_length");
  c.layers = meta.get<std::int64_t>(arch + ".block_count");
  c.heads = meta.get<std::int64_t>(arch + ".attention.head_count");
  c.kvHeads = meta.get<std::int64_t>(arch + ".attention.head_count_kv", c.heads);
  if (c.heads <= 0) meta.fail(arch + ".attention.head_count must be positive");
  c.headDim = meta.get<std::int64_t>(arch + ".attention.key_length", c.hiddenSize / c.heads);
  c.maxPositions = meta.get<std::int64_t>(arch + ".context_length", 4096);
  c.rmsEps = meta.get<double>(arch + ".attention.layer_norm_rms_epsilon", 1e-6);
  c.ropeTheta = meta.get<double>(arch + ".rope.freq_base", 10000.0);
  const auto scaling = meta.get<std::string>(arch + ".rope.scaling.type", "none");
  if (tensors.count("rope_freqs.weight")) {
    // Llama-3.1: llama.cpp stores the per-frequency divisors instead of the rope_scaling keys.
    c.ropeScaling.type = "rope_freqs";
  } else if (scaling == "linear") {
    c.ropeScaling.type = "linear";
    c.ropeScaling.factor = meta.get<double>(arch + ".rope.scaling.factor");
  } else if (scaling != "none") {
    meta.fail("unsupported rope scaling '" + scaling + "' (" + arch + ".rope.scaling.type)");
  }
  c.attentionBias = tensors.count("blk.0.attn_q.bias") > 0;
  c.qkNorm = tensors.count("blk.0.attn_q_norm.weight") > 0;
  c.tieWordEmbeddings = tensors.count("output.weight") == 0;
  const auto q = tensors.find("blk.0.attn_q.weight");
  c.dtype = checkpointDtype(q != tensors.end() ? q->second.type : embed->second.type);
  if (c.kvHeads <= 0 || c.heads % c.kvHeads != 0 || c.headDim <= 0 || c.layers <= 0)
    meta.fail("inconsistent head counts or block count");
  return c;
}

// tokenizer.ggml.pre (llama.cpp's names for the pre-tokenizers it knows) as the pre_tokenizer and
// normalizer of the tokenizer.json that Hugging Face ships for that family.
struct PreTokenizerFamily {
  std::vector<std::string_view> names;
  json preTokenizer;
  bool nfc = false;
  bool ignoreMerges = false;
  bool addBos = false;  // llama.cpp's default when tokenizer.ggml.add_bos_token is absent
};

json splitThenBytes(SplitPattern pattern) {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"},
             {"pattern", {{"Regex", std::string(splitPatternRegex(pattern))}}},
             {"behavior", "Isolated"},
             {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
}

const std::vector<PreTokenizerFamily>& preTokenizerFamilies() {
  static const std::vector<PreTokenizerFamily> families = {
      {{"llama3", "llama-v3", "llama-bpe"},
       splitThenBytes(SplitPattern::Llama3),
       false,
       true,
       true},
      {{"qwen2", "deepseek-r1-qwen"}, splitThenBytes(SplitPattern::Qwen2), true, false, false},
      {{"smollm"},
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Digits"}, {"individual_digits", true}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}}}},
       false,
       false,
       false},
      {{"gpt-2", "gpt2"},
       {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}},
       false,
       false,
       false},
  };
  return families;
}

// The metadata as a tokenizer.json, so that one parser (Tokenizer::fromJson) checks both formats.
json tokenizerJson(const Metadata& meta) {
  const auto model = meta.get<std::string>("tokenizer.ggml.model");
  if (model != "gpt2")
    meta.fail("tokenizer.ggml.model '" + model +
              "' is not supported (only byte-level BPE, 'gpt2'; SentencePiece is not)");
  const auto pre = meta.get<std::string>("tokenizer.ggml.pre", "default");
  const PreTokenizerFamily* family = nullptr;
  for (const auto& f : preTokenizerFamilies())
    for (auto name : f.names)
      if (pre == name) family = &f;
  if (!family)
    meta.fail("tokenizer.ggml.pre '" + pre +
              "' is not supported (supported: llama-bpe, llama3, qwen2, deepseek-r1-qwen, smollm, "
              "gpt-2)");
  const auto tokens = meta.get<std::vector<std::string>>("tokenizer.ggml.tokens");
  const auto types =
      meta.get<std::vector<int>>("tokenizer.ggml.token_type", std::vector<int>(tokens.size(), 1));
  if (types.size() != tokens.size())
    meta.fail("tokenizer.ggml.token_type has " + std::to_string(types.size()) + " entries for " +
              std::to_string(tokens.size()) + " tokens");
  json vocab = json::object(), added = json::array();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const int id = static_cast<int>(i);
    if (types[i] == kTokenControl || types[i] == kTokenUserDefined)
      // Stored as their text, not byte-level (llama.cpp's converter pre-normalises them).
      added.push_back({{"id", id}, {"content", tokens[i]}, {"special", types[i] == kTokenControl}});
    else if (types[i] != kTokenUnused)
      vocab[tokens[i]] = id;
  }
  json tok = {{"model",
               {{"type", "BPE"},
                {"vocab", std::move(vocab)},
                {"merges", meta.get<json>("tokenizer.ggml.merges", json::array())},
                {"ignore_merges", family->ignoreMerges}}},
              {"added_tokens", std::move(added)},
              {"pre_tokenizer", family->preTokenizer},
              {"normalizer", family->nfc ? json{{"type", "NFC"}} : json()}};
  json single = json::array(), specials = json::object();
  auto addSpecial = [&](const std::string& which, bool atStart) {
    const int id = meta.get<int>("tokenizer.ggml." + which + "_token_id");
    specials[which] = {{"id", which}, {"ids", {id}}};
    json item = {{"SpecialToken", {{"id", which}, {"type_id", 0}}}};
    if (atStart)
      single.insert(single.begin(), item);
    else
      single.push_back(item);
  };
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  if (meta.get<bool>("tokenizer.ggml.add_bos_token", family->addBos)) addSpecial("bos", true);
  if (meta.get<bool>("tokenizer.ggml.add_eos_token", false)) addSpecial("eos", false);
  tok["post_processor"] = {
      {"type", "TemplateProcessing"}, {"single", single}, {"special_tokens", specials}};
  return tok;
}

}  // namespace

std::optional<std::string> huggingFaceTensorName(std::string_view name) {
  static const std::map<std::string_view, std::string_view> kGlobal = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"}};
  static const std::map<std::string_view, std::string_view> kLayer = {
      {"attn_norm", "input_layernorm"},    {"ffn_norm", "post_attention_layernorm"},
      {"attn_q", "self_attn.q_proj"},      {"attn_k", "self_attn.k_proj"},
      {"attn_v", "self_attn.v_proj"},      {"attn_output", "self_attn.o_proj"},
      {"attn_q_norm", "self_attn.q_norm"}, {"attn_k_norm", "self_attn.k_norm"},
      {"ffn_gate", "mlp.gate_proj"},       {"ffn_up", "mlp.up_proj"},
      {"ffn_down", "mlp.down_proj"}};
  if (const auto it = kGlobal.find(name); it != kGlobal.end()) return std::string(it->second);
  // blk.<n>.<part>.<weight|bias>
  if (name.substr(0, 4) != "blk.") return std::nullopt;
  const auto layerEnd = name.find('.', 4);
  const auto suffixStart = name.rfind('.');
  if (layerEnd == std::string_view::npos || suffixStart <= layerEnd) return std::nullopt;
  const auto part = kLayer.find(name.substr(layerEnd + 1, suffixStart - layerEnd - 1));
  if (part == kLayer.end()) return std::nullopt;
  return "model.layers." + std::string(name.substr(4, layerEnd - 4)) + "." +
         std::string(part->second) + std::string(name.substr(suffixStart));
}

void unpermuteQueryKey(float* data, std::int64_t rows, std::int64_t columns, std::int64_t heads) {
  // Within each head, stored row 2*i + j holds original row j*half + i (j in {0, 1}).
  const std::int64_t perHead = rows / heads, half = perHead / 2;
  std::vector<float> head(static_cast<std::size_t>(perHead * columns));
  for (std::int64_t h = 0; h < heads; ++h) {
    float* base = data + h * perHead * columns;
    std::memcpy(head.data(), base, head.size() * sizeof(float));
    for (std::int64_t i = 0; i < half; ++i)
      for (std::int64_t j = 0; j < 2; ++j)
        std::memcpy(base + (j * half + i) * columns, head.data() + (2 * i + j) * columns,
                    static_cast<std::size_t>(columns) * sizeof(float));
  }
}

ModelFolder openGgufModel(const std::filesystem::path& path) {
  auto file = std::make_shared<const GgufFile>(path);
  const Metadata meta(*file, path.string());
  ModelFolder m;
  m.path = path;
  m.format = "gguf";
  m.config = configFromGguf(*file, meta);
  m.tokenizer = Tokenizer::fromJson(tokenizerJson(meta), path.string() + ": tokenizer.ggml.*");
  m.chatTemplateText = meta.get<std::string>("tokenizer.chat_template", "");
  if (!m.chatTemplateText.empty()) {
    try {
      m.chatTemplate = ChatTemplate::detect(m.chatTemplateText);
    } catch (const ModelError&) {
      // As for a folder: chat requests are refused with a clear error, raw prompts still work.
    }
  }
  for (const char* which : {"eos", "eot", "eom"}) {
    const std::string key = std::string("tokenizer.ggml.") + which + "_token_id";
    if (meta.has(key)) m.stopIds.insert(meta.get<int>(key));
  }
  // The end of a chat turn ends the answer even where eos names another token (base models).
  if (m.chatTemplate)
    if (auto id = m.tokenizer.tokenId(m.chatTemplate->format == ChatFormat::ChatML ? "<|im_end|>"
                                                                                   : "<|eot_id|>"))
      m.stopIds.insert(*id);
  m.gguf = std::move(file);
  return m;
}

}  // namespace crucible::llm
