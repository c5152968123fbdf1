// GPT-2's byte-to-unicode table: byte-level BPE vocabularies spell each raw byte as one printable
// code point ('Ġ' for a space). The tokenizer works on raw bytes and converts at the edges.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crucible::llm {

char32_t byteToUnicode(unsigned char byte);
// A vocabulary entry's raw bytes; nullopt when it holds a code point outside the table.
std::optional<std::string> byteLevelToBytes(std::string_view token);
std::string bytesToByteLevel(std::string_view bytes);

}  // namespace crucible::llm
