// Code-point classes that the byte-level BPE pre-tokenizers need (\p{L}, \p{N}, \s), so that the
// Llama-3 / Qwen2 / GPT-2 split patterns can be matched by hand without a Unicode regex engine.
#pragma once

#include <cstdint>
#include <vector>

namespace crucible::llm {

struct CodePointRange {
  char32_t first;
  char32_t last;
};

struct CombiningClass {
  char32_t cp;
  int ccc;  // canonical combining class, non-zero
};

// A canonical decomposition of one or two code points (second 0 when one); `composes` when the
// pair is a primary composite that NFC recomposes. Hangul syllables are algorithmic, not listed.
struct CanonicalDecomposition {
  char32_t cp;
  char32_t first;
  char32_t second;
  bool composes;
};

namespace unicode_table {
extern const std::vector<CodePointRange> kLetters;                 // general category L*
extern const std::vector<CodePointRange> kNumbers;                 // general category N*
extern const std::vector<CombiningClass> kCombiningClasses;        // sorted by cp
extern const std::vector<CanonicalDecomposition> kDecompositions;  // sorted by cp
}  // namespace unicode_table

bool isLetter(char32_t cp);
bool isNumber(char32_t cp);
// Oniguruma's Unicode \s (the White_Space property), which Hugging Face tokenizers uses.
bool isWhitespace(char32_t cp);

}  // namespace crucible::llm
