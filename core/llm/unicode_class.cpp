#include <algorithm>

#include "core/llm/unicode_table.h"

namespace crucible::llm {
namespace {
bool inRanges(const std::vector<CodePointRange>& ranges, char32_t cp) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                             [](char32_t v, const CodePointRange& r) { return v < r.first; });
  return it != ranges.begin() && cp <= std::prev(it)->last;
}
}  // namespace

bool isLetter(char32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return inRanges(unicode_table::kLetters, cp);
}

bool isNumber(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return inRanges(unicode_table::kNumbers, cp);
}

bool isWhitespace(char32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

}  // namespace crucible::llm
