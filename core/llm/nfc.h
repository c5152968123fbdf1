// Unicode NFC (canonical decomposition, canonical ordering, canonical composition), for the
// tokenizers whose tokenizer.json declares an NFC normalizer (Qwen2/2.5/3).
#pragma once

#include <string>
#include <string_view>

namespace crucible::llm {

// The NFC form of UTF-8 text. Invalid bytes pass through unchanged.
std::string toNfc(std::string_view text);

}  // namespace crucible::llm
