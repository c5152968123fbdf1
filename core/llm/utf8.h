// UTF-8 <-> code points, lenient: an invalid byte decodes as U+FFFD and keeps its one-byte span,
// so that offsets into the original bytes stay exact (the tokenizer splits bytes, not text).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace crucible::llm {

struct DecodedCodePoint {
  char32_t cp;
  std::size_t offset;  // byte offset of the first byte in the input
  std::size_t length;  // bytes it spans
};

std::vector<DecodedCodePoint> decodeUtf8(std::string_view bytes);
void appendUtf8(std::string& out, char32_t cp);
// The number of trailing bytes of `bytes` that form an incomplete UTF-8 sequence (0 when the text
// ends on a code-point boundary); streaming holds these back until the next token completes them.
std::size_t incompleteUtf8Tail(std::string_view bytes);

}  // namespace crucible::llm
