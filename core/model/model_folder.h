// What a Hugging Face model folder says besides the weights: config.json, tokenizer.json,
// tokenizer_config.json (chat_template, special tokens) and generation_config.json (eos ids).
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "core/model/chat_template.h"
#include "core/model/model_config.h"
#include "core/model/tokenizer.h"

namespace crucible::model {

struct ModelFolder {
  std::filesystem::path path;
  ModelConfig config;
  Tokenizer tokenizer;
  std::string chatTemplateText;              // empty when the folder has none
  std::optional<ChatTemplate> chatTemplate;  // detected format, when the text is one we render
  std::set<int> stopIds;                     // eos ids from generation_config / tokenizer_config

  // Throws ModelError naming the file at fault.
  static ModelFolder open(const std::filesystem::path& folder);
};

}  // namespace crucible::model
