#include "core/llm/pretokenizer.h"

#include "core/llm/unicode_table.h"
#include "core/llm/utf8.h"

namespace crucible::llm {
namespace {

constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Matches one piece at index i of cps; returns the index one past its end (> i).
class Matcher {
 public:
  Matcher(const std::vector<DecodedCodePoint>& cps, SplitPattern pattern)
      : cps_(cps), pattern_(pattern) {}

  std::size_t match(std::size_t i) const {
    if (auto end = contraction(i)) return end;
    if (pattern_ == SplitPattern::Gpt2) return matchGpt2(i);
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (isLetterAt(i)) return letterRun(i);
    if (!isNewline(at(i)) && !isNumber(at(i)) && isLetterAt(i + 1)) return letterRun(i + 1);
    // \p{N}{1,3} or \p{N}
    if (isNumber(at(i))) {
      const std::size_t maxDigits = pattern_ == SplitPattern::Llama3 ? 3 : 1;
      std::size_t j = i;
      while (j < size() && j - i < maxDigits && isNumber(at(j))) ++j;
      return j;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    if (auto end = punctuation(i)) {
      std::size_t j = end;
      while (j < size() && isNewline(at(j))) ++j;
      return j;
    }
    // Whitespace from here on: \s*[\r\n]+ ends after the run's last newline.
    const std::size_t runEnd = whitespaceRun(i);
    for (std::size_t j = runEnd; j > i; --j)
      if (isNewline(at(j - 1))) return j;
    return whitespaceTail(i, runEnd);
  }

 private:
  std::size_t size() const { return cps_.size(); }
  char32_t at(std::size_t i) const { return i < cps_.size() ? cps_[i].cp : 0; }
  bool isLetterAt(std::size_t i) const { return i < size() && isLetter(at(i)); }
  static bool isNewline(char32_t c) { return c == '\r' || c == '\n'; }
  static bool isOther(char32_t c) { return !isWhitespace(c) && !isLetter(c) && !isNumber(c); }

  bool sameLetter(std::size_t i, char lower) const {
    const char32_t c = at(i);
    if (pattern_ == SplitPattern::Gpt2) return c == static_cast<char32_t>(lower);
    if (c == static_cast<char32_t>(lower) || c == static_cast<char32_t>(lower - 32)) return true;
    return lower == 's' && c == 0x17F;  // LATIN SMALL LETTER LONG S case-folds to 's'
  }

  std::size_t contraction(std::size_t i) const {
    if (at(i) != '\'' || i + 1 >= size()) return 0;
    for (char c : {'s', 't', 'm', 'd'})
      if (sameLetter(i + 1, c)) return i + 2;
    for (const char* two : {"re", "ve", "ll"})
      if (i + 2 < size() && sameLetter(i + 1, two[0]) && sameLetter(i + 2, two[1])) return i + 3;
    return 0;
  }

  std::size_t letterRun(std::size_t j) const {
    while (j < size() && isLetter(at(j))) ++j;
    return j;
  }

  //  ?[^\s\p{L}\p{N}]+ : 0 when it does not match at i.
  std::size_t punctuation(std::size_t i) const {
    std::size_t j = i;
    if (at(j) == ' ' && j + 1 < size() && isOther(at(j + 1))) ++j;
    if (j >= size() || !isOther(at(j))) return 0;
    while (j < size() && isOther(at(j))) ++j;
    return j;
  }

  std::size_t whitespaceRun(std::size_t i) const {
    std::size_t j = i;
    while (j < size() && isWhitespace(at(j))) ++j;
    return j;
  }

  // \s+(?!\S)|\s+ over the whitespace run [i, runEnd): leave the last space to the next word.
  std::size_t whitespaceTail(std::size_t i, std::size_t runEnd) const {
    if (runEnd == size() || runEnd - i == 1) return runEnd;
    return runEnd - 1;
  }

  std::size_t matchGpt2(std::size_t i) const {
    const std::size_t start = at(i) == ' ' && i + 1 < size() ? i + 1 : i;
    //  ?\p{L}+ |  ?\p{N}+
    if (isLetter(at(start))) return letterRun(start);
    if (isNumber(at(start))) {
      std::size_t j = start;
      while (j < size() && isNumber(at(j))) ++j;
      return j;
    }
    if (auto end = punctuation(i)) return end;
    return whitespaceTail(i, whitespaceRun(i));
  }

  const std::vector<DecodedCodePoint>& cps_;
  SplitPattern pattern_;
};

}  // namespace

std::optional<SplitPattern> splitPatternFromRegex(std::string_view regex) {
  if (regex == kLlama3Regex) return SplitPattern::Llama3;
  if (regex == kQwen2Regex) return SplitPattern::Qwen2;
  if (regex == kGpt2Regex) return SplitPattern::Gpt2;
  return std::nullopt;
}

std::string_view splitPatternRegex(SplitPattern pattern) {
  switch (pattern) {
    case SplitPattern::Llama3:
      return kLlama3Regex;
    case SplitPattern::Qwen2:
      return kQwen2Regex;
    case SplitPattern::Gpt2:
      return kGpt2Regex;
  }
  return {};
}

std::string_view splitPatternName(SplitPattern pattern) {
  switch (pattern) {
    case SplitPattern::Llama3:
      return "llama3";
    case SplitPattern::Qwen2:
      return "qwen2";
    case SplitPattern::Gpt2:
      return "gpt2";
  }
  return "?";
}

std::vector<std::string_view> preTokenize(std::string_view text, SplitPattern pattern) {
  const std::vector<DecodedCodePoint> cps = decodeUtf8(text);
  const Matcher matcher(cps, pattern);
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i < cps.size();) {
    const std::size_t end = matcher.match(i);
    const std::size_t from = cps[i].offset;
    const std::size_t to = end < cps.size() ? cps[end].offset : text.size();
    pieces.push_back(text.substr(from, to - from));
    i = end;
  }
  return pieces;
}

}  // namespace crucible::llm
