#include "core/llm/model_folder.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/llm/gguf.h"
#include "core/llm/gguf_model.h"
#include "core/llm/model_error.h"

namespace crucible::llm {
namespace {
nlohmann::json readOptionalJson(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) return nlohmann::json::object();
  std::ifstream in(path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw ModelError(path.string() + ": not JSON: " + e.what());
  }
}

void addIds(std::set<int>& ids, const nlohmann::json& value) {
  if (value.is_number_integer()) ids.insert(value.get<int>());
  if (value.is_array())
    for (const auto& v : value)
      if (v.is_number_integer()) ids.insert(v.get<int>());
}

// A special token named in tokenizer_config.json: a string or {"content": ...}.
std::optional<std::string> tokenName(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content")) return value["content"].get<std::string>();
  return std::nullopt;
}
}  // namespace

ModelFolder ModelFolder::open(const std::filesystem::path& folder) {
  if (std::filesystem::is_regular_file(folder)) return openGgufModel(folder);
  if (!std::filesystem::is_directory(folder))
    throw ModelError(folder.string() +
                     ": not found (expected a Hugging Face model folder or a .gguf file)");
  ModelFolder m;
  m.path = folder;
  m.config = ModelConfig::fromFile(folder / "config.json");
  m.tokenizer = Tokenizer::fromFile(folder / "tokenizer.json");
  const auto tokConfig = readOptionalJson(folder / "tokenizer_config.json");
  if (tokConfig.contains("chat_template") && tokConfig["chat_template"].is_string())
    m.chatTemplateText = tokConfig["chat_template"].get<std::string>();
  if (!m.chatTemplateText.empty()) {
    try {
      m.chatTemplate = ChatTemplate::detect(m.chatTemplateText);
    } catch (const ModelError&) {
      // An unknown template leaves chat requests unsupported; raw prompts still work.
    }
  }
  if (auto eos = tokenName(tokConfig.value("eos_token", nlohmann::json())))
    if (auto id = m.tokenizer.tokenId(*eos)) m.stopIds.insert(*id);
  const auto genConfig = readOptionalJson(folder / "generation_config.json");
  addIds(m.stopIds, genConfig.value("eos_token_id", nlohmann::json()));
  const auto config = readOptionalJson(folder / "config.json");
  if (m.stopIds.empty()) addIds(m.stopIds, config.value("eos_token_id", nlohmann::json()));
  return m;
}

}  // namespace crucible::llm
