#include "core/llm/nfc.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "core/llm/unicode_table.h"
#include "core/llm/utf8.h"

namespace crucible::llm {
namespace {

// Hangul syllables decompose and compose arithmetically (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount,
                   kSCount = kLCount * kNCount;

struct Tables {
  std::unordered_map<char32_t, int> ccc;
  std::unordered_map<char32_t, const CanonicalDecomposition*> decomposition;
  std::unordered_map<std::uint64_t, char32_t> composition;
  Tables() {
    for (const auto& c : unicode_table::kCombiningClasses) ccc.emplace(c.cp, c.ccc);
    for (const auto& d : unicode_table::kDecompositions) {
      decomposition.emplace(d.cp, &d);
      if (d.composes) composition.emplace(key(d.first, d.second), d.cp);
    }
  }
  static std::uint64_t key(char32_t a, char32_t b) {
    return (static_cast<std::uint64_t>(a) << 32) | b;
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

int combiningClass(char32_t cp) {
  const auto it = tables().ccc.find(cp);
  return it == tables().ccc.end() ? 0 : it->second;
}

void decompose(char32_t cp, std::vector<char32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto it = tables().decomposition.find(cp);
  if (it == tables().decomposition.end()) {
    out.push_back(cp);
    return;
  }
  decompose(it->second->first, out);
  if (it->second->second) decompose(it->second->second, out);
}

char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount)
    return a + (b - kTBase);
  const auto it = tables().composition.find(Tables::key(a, b));
  return it == tables().composition.end() ? 0 : it->second;
}

}  // namespace

std::string toNfc(std::string_view text) {
  const auto cps = decodeUtf8(text);
  // Below U+0300 every code point is already NFC and nothing composes with it: the common case.
  if (std::all_of(cps.begin(), cps.end(), [](const DecodedCodePoint& d) { return d.cp < 0x300; }))
    return std::string(text);
  std::vector<char32_t> chars;
  std::vector<bool> raw;  // invalid input bytes, kept as they were
  for (const auto& d : cps) {
    if (d.cp == 0xFFFD && d.length == 1) {
      chars.push_back(static_cast<unsigned char>(text[d.offset]) | 0x80000000u);
      continue;
    }
    decompose(d.cp, chars);
  }
  auto ccOf = [](char32_t c) { return (c & 0x80000000u) ? 0 : combiningClass(c); };
  // Canonical ordering: stable sort of each run of non-starters by combining class.
  for (std::size_t i = 0; i < chars.size();) {
    if (ccOf(chars[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < chars.size() && ccOf(chars[j]) != 0) ++j;
    std::stable_sort(chars.begin() + i, chars.begin() + j,
                     [&](char32_t a, char32_t b) { return ccOf(a) < ccOf(b); });
    i = j;
  }
  // Canonical composition: each character joins the last starter unless blocked.
  std::vector<char32_t> out;
  std::size_t starter = SIZE_MAX;
  int lastClass = -1;
  for (char32_t c : chars) {
    const int cc = ccOf(c);
    if (starter != SIZE_MAX && !(c & 0x80000000u)) {
      const bool blocked = lastClass != -1 && (lastClass == 0 || lastClass >= cc);
      if (!blocked) {
        if (const char32_t composed = compose(out[starter], c)) {
          out[starter] = composed;
          continue;
        }
      }
    }
    if (cc == 0) {
      starter = out.size();
      lastClass = -1;
    } else {
      lastClass = cc;
    }
    out.push_back(c);
  }
  std::string result;
  for (char32_t c : out) {
    if (c & 0x80000000u)
      result += static_cast<char>(c & 0xFF);
    else
      appendUtf8(result, c);
  }
  return result;
}

}  // namespace crucible::llm
