// The split patterns of the byte-level BPE families, matched by hand (leftmost alternative first,
// with the backtracking the regex engine would do), because std::regex has no \p{L}.
//
//   llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//           ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2:  the same with \p{N} (one digit per piece)
//   gpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crucible::llm {

enum class SplitPattern { Llama3, Qwen2, Gpt2 };

// The pattern whose regex source (as written in tokenizer.json) is `regex`, if it is one we know.
std::optional<SplitPattern> splitPatternFromRegex(std::string_view regex);
std::string_view splitPatternName(SplitPattern pattern);
// The regex source as tokenizer.json writes it (the inverse of splitPatternFromRegex).
std::string_view splitPatternRegex(SplitPattern pattern);

// Splits UTF-8 text into pre-tokens (byte substrings that together are exactly `text`).
std::vector<std::string_view> preTokenize(std::string_view text, SplitPattern pattern);

}  // namespace crucible::llm
