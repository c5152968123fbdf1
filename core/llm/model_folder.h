// What a model on disk says besides the weights. A Hugging Face folder: config.json,
// tokenizer.json, tokenizer_config.json (chat_template, special tokens) and
// generation_config.json (eos ids). A GGUF file: the same from its metadata (gguf_model.h).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/llm/chat_template.h"
#include "core/llm/model_config.h"
#include "core/llm/tokenizer.h"

namespace crucible::llm {

class GgufFile;

struct ModelFolder {
  std::filesystem::path path;
  std::string format = "safetensors";  // or "gguf"
  ModelConfig config;
  Tokenizer tokenizer;
  std::string chatTemplateText;              // empty when the folder has none
  std::optional<ChatTemplate> chatTemplate;  // detected format, when the text is one we render
  std::set<int> stopIds;                     // eos ids from generation_config / tokenizer_config
  std::shared_ptr<const GgufFile> gguf;      // the mapped file, for a GGUF model

  // A folder, or a .gguf file (any regular file is read as GGUF). Throws ModelError naming the
  // file at fault.
  static ModelFolder open(const std::filesystem::path& path);
};

}  // namespace crucible::llm
