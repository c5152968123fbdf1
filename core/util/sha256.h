#pragma once
// SHA-256 (FIPS 180-4), small and dependency-free: the keys of tasks and candidates (their source
// text), the digests of the files a candidate's stage writes, the OpenCL compiler's cache keys.
// Not constant-time; not meant for secrets.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace crucible::util {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();
  /// Feeds more bytes; may be called any number of times before finish().
  void update(std::string_view bytes);
  /// Pads, returns the digest and resets to the empty state.
  Digest finish();

  /// Lower-case hex of a digest (64 characters).
  static std::string hex(const Digest& digest);

 private:
  void reset();

  std::array<std::uint32_t, 8> state_{};
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes fed so far
};

/// The lower-case hex SHA-256 of `bytes`.
std::string sha256Hex(std::string_view bytes);

}  // namespace crucible::util
