#include "core/verify/channel_auth.h"

#include <array>
#include <fstream>
#include <random>

#include "core/util/sha256.h"

namespace crucible {

namespace {
std::string toBytes(const util::Sha256::Digest& digest) {
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

bool constantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}
}  // namespace

std::string makeChannelKey() {
  std::array<unsigned char, 32> bytes{};
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(bytes.data()), bytes.size())) {
    std::random_device device;
    for (auto& b : bytes) b = static_cast<unsigned char>(device());
  }
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (auto b : bytes) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

std::string hmacSha256Hex(std::string_view key, std::string_view message) {
  constexpr std::size_t kBlock = 64;
  std::string k(key);
  if (k.size() > kBlock) {
    util::Sha256 h;
    h.update(k);
    k = toBytes(h.finish());
  }
  k.resize(kBlock, '\0');
  std::string inner(kBlock, '\0'), outer(kBlock, '\0');
  for (std::size_t i = 0; i < kBlock; ++i) {
    inner[i] = static_cast<char>(k[i] ^ 0x36);
    outer[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  util::Sha256 h;
  h.update(inner);
  h.update(message);
  const std::string innerDigest = toBytes(h.finish());
  h.update(outer);
  h.update(innerDigest);
  return util::Sha256::hex(h.finish());
}

std::optional<nlohmann::json> openChannelLine(std::string_view line, std::string_view key) {
  const auto outer = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!outer.is_object() || !outer.contains("body") || !outer["body"].is_string() ||
      !outer.contains("mac") || !outer["mac"].is_string()) {
    return std::nullopt;
  }
  const auto& body = outer["body"].get_ref<const std::string&>();
  if (!constantTimeEqual(hmacSha256Hex(key, body), outer["mac"].get<std::string>())) {
    return std::nullopt;
  }
  auto inner = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!inner.is_object()) return std::nullopt;
  return inner;
}

}  // namespace crucible
