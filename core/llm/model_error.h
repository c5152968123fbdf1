// The one error type of the model engine's readers (tokenizer.json, config.json, safetensors,
// GGUF, requests): its message names the file or request and what is wrong with it.
#pragma once

#include <stdexcept>
#include <string>

namespace crucible::llm {

class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace crucible::llm
