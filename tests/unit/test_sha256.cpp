// SHA-256 (core/util/sha256): the standard vectors, padding at every boundary, incremental
// updates against one shot, and the SHA extensions against the portable code.

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/util/sha256.h"
#include "core/util/sha256_detail.h"

namespace crucible::util {
namespace {

// Runs `check` with the portable code, then with the fastest this CPU has (the SHA extensions
// where present), so every expectation holds for both.
template <class Check>
void onBothPaths(Check check) {
  for (const bool portable : {true, false}) {
    SCOPED_TRACE(portable ? "portable" : "fastest");
    detail::sha256ForcePortable(portable);
    check();
  }
  detail::sha256ForcePortable(false);
}

std::string randomBytes(std::size_t size, std::mt19937& rng) {
  std::string out(size, '\0');
  for (char& byte : out) byte = static_cast<char>(rng());
  return out;
}

TEST(Sha256, StandardVectors) {
  onBothPaths([] {
    EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(
        sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnop"
                  "qklmnopqrlmnopqrsmnopqrstnopqrstu"),
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  });
}

TEST(Sha256, PaddingBoundaries) {
  // Lengths around the 56- and 64-byte points where padding spills into another block
  // (expected values from Python's hashlib).
  const std::vector<std::pair<std::size_t, std::string>> cases = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  onBothPaths([&] {
    for (const auto& [length, expected] : cases) {
      EXPECT_EQ(sha256Hex(std::string(length, 'a')), expected) << length;
    }
  });
}

TEST(Sha256, IncrementalEqualsOneShotAtEverySplit) {
  std::string data;
  for (int copy = 0; copy < 3; ++copy) {
    for (int byte = 0; byte < 256; ++byte) data.push_back(static_cast<char>(byte));
  }
  const std::string expected = "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363";
  ASSERT_EQ(sha256Hex(data), expected);
  Sha256 hasher;
  for (std::size_t split = 0; split <= data.size(); split += 7) {
    hasher.update(std::string_view(data).substr(0, split));
    hasher.update(std::string_view(data).substr(split));
    EXPECT_EQ(Sha256::hex(hasher.finish()), expected) << split;  // finish() resets
  }
}

TEST(Sha256, UpdatesInAwkwardPiecesEqualOneShot) {
  // Pieces of 1, 63, 64 and 65 bytes leave the buffer partly full, exactly full or spilling, and
  // random pieces mix whole-block runs with buffered tails.
  std::mt19937 rng(20261127);
  const std::string data = randomBytes(5000, rng);
  onBothPaths([&] {
    const std::string expected = sha256Hex(data);
    for (const std::size_t piece : {1, 63, 64, 65}) {
      Sha256 hasher;
      for (std::size_t at = 0; at < data.size(); at += piece) {
        hasher.update(std::string_view(data).substr(at, piece));
      }
      EXPECT_EQ(Sha256::hex(hasher.finish()), expected) << piece;
    }
    for (int trial = 0; trial < 50; ++trial) {
      Sha256 hasher;
      for (std::size_t at = 0; at < data.size();) {
        const std::size_t piece = std::uniform_int_distribution<std::size_t>(0, 300)(rng);
        hasher.update(std::string_view(data).substr(at, piece));
        at += piece;
      }
      EXPECT_EQ(Sha256::hex(hasher.finish()), expected) << trial;
    }
    Sha256 million;
    const std::string tenThousand(10000, 'a');
    for (int i = 0; i < 100; ++i) million.update(tenThousand);
    EXPECT_EQ(Sha256::hex(million.finish()),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  });
}

TEST(Sha256, ShaExtensionsAgreeWithPortableCode) {
  if (!detail::sha256HasShaExtensions()) GTEST_SKIP() << "this CPU has no SHA extensions";
  std::mt19937 rng(7);
  std::vector<std::size_t> lengths;
  for (std::size_t length = 0; length <= 1100; ++length) lengths.push_back(length);
  for (int i = 0; i < 20; ++i) {
    lengths.push_back(std::uniform_int_distribution<std::size_t>(1100, 1 << 20)(rng));
  }
  for (const std::size_t length : lengths) {
    const std::string data = randomBytes(length, rng);
    detail::sha256ForcePortable(true);
    const std::string portable = sha256Hex(data);
    detail::sha256ForcePortable(false);
    ASSERT_EQ(sha256Hex(data), portable) << length;
  }
}

}  // namespace
}  // namespace crucible::util
