#include "core/llm/byte_level.h"

#include <array>

#include "core/llm/utf8.h"

namespace crucible::llm {
namespace {
struct Tables {
  std::array<char32_t, 256> toUnicode{};
  std::array<int, 512> toByte{};  // every mapped code point is < 512
  Tables() {
    toByte.fill(-1);
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      toUnicode[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + extra++);
      toByte[toUnicode[b]] = b;
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}
}  // namespace

char32_t byteToUnicode(unsigned char byte) {
  return tables().toUnicode[byte];
}

std::optional<std::string> byteLevelToBytes(std::string_view token) {
  std::string out;
  for (const DecodedCodePoint& d : decodeUtf8(token)) {
    if (d.cp >= 512 || tables().toByte[d.cp] < 0) return std::nullopt;
    out += static_cast<char>(tables().toByte[d.cp]);
  }
  return out;
}

std::string bytesToByteLevel(std::string_view bytes) {
  std::string out;
  for (char c : bytes) appendUtf8(out, byteToUnicode(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace crucible::llm
