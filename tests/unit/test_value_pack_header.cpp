// Crafted value-pack headers: the worker that writes packs runs user code, so every count in a
// header is untrusted. Each must be refused with a ValuePackError naming the file and the
// problem, never overflow, read past the file or escape as another exception.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "core/verify/value_pack.h"
#include "temp_dir.h"

namespace crucible {
namespace {

/// A pack's bytes around a header written by hand, followed by `dataBytes` zero bytes.
std::string rawPack(std::string_view header, std::size_t dataBytes = 0) {
  const std::uint64_t length = header.size();
  std::string out = "CRUCTP01";
  out.append(reinterpret_cast<const char*>(&length), 8);
  out += header;
  out.append(dataBytes, '\0');
  return out;
}

/// A header holding one tensor entry (JSON text), the value being that tensor.
std::string oneTensor(std::string_view entry) {
  return R"({"value":{"tensor":0},"tensors":[)" + std::string(entry) + "]}";
}

/// The error parsing these bytes gives, or "" when they parse.
std::string errorOf(const std::string& bytes) {
  try {
    ValuePack::parse(bytes, "crafted.ctp");
  } catch (const ValuePackError& e) {
    return e.what();
  }
  return "";
}

/// Whether parsing these bytes is refused with a message naming the file and `problem`.
::testing::AssertionResult refused(const std::string& bytes, std::string_view problem) {
  const std::string message = errorOf(bytes);
  if (message.empty()) return ::testing::AssertionFailure() << "parsed without error";
  if (message.rfind("crafted.ctp: ", 0) != 0 || message.find(problem) == std::string::npos) {
    return ::testing::AssertionFailure() << "refused as: " << message;
  }
  return ::testing::AssertionSuccess();
}

TEST(ValuePackHeader, AnHonestHandWrittenPackParses) {
  // The helpers themselves are right: the same entry with consistent counts is accepted.
  const auto pack =
      ValuePack::parse(rawPack(oneTensor(R"({"dtype":"float32","shape":[2,3],"offset":0,)"
                                         R"("nbytes":24})"),
                               24),
                       "crafted.ctp");
  ASSERT_EQ(pack.tensors().size(), 1u);
  EXPECT_EQ(pack.tensors()[0].numel(), 6u);
  EXPECT_EQ(errorOf(rawPack(oneTensor(R"({"dtype":"bool","shape":[0,4611686018427387904],)"
                                      R"("offset":0,"nbytes":0})"))),
            "");
}

TEST(ValuePackHeader, AnElementCountBeyondSixtyFourBitsIsRefused) {
  // 2^32 * 2^32 wraps to 0 elements: nbytes 0 matched it and the tensor claimed 2^64 elements.
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"dtype":"float32","shape":[4294967296,4294967296],)"
                                        R"("offset":0,"nbytes":0})")),
                      "more elements than 64 bits can count"));
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"dtype":"uint8","shape":[3,2,9223372036854775807],)"
                                        R"("offset":0,"nbytes":0})")),
                      "more elements than 64 bits can count"));
  // The zeros of an empty tensor do not hide the overflow of its other dimensions.
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"dtype":"uint8","shape":[0,4294967296,4294967296],)"
                                        R"("offset":0,"nbytes":0})")),
                      "more elements than 64 bits can count"));
}

TEST(ValuePackHeader, AByteCountBeyondSixtyFourBitsIsRefused) {
  // (2^62 + 1) float32 elements are 2^64 + 4 bytes, which wrapped to the 4 bytes present: every
  // element past the first was read beyond the file.
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"dtype":"float32","shape":[4611686018427387905],)"
                                        R"("offset":0,"nbytes":4})"),
                              4),
                      "more bytes than 64 bits can count"));
}

TEST(ValuePackHeader, BytesClaimedBeyondTheFileAreRefused) {
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"dtype":"float32","shape":[1000],"offset":0,)"
                                        R"("nbytes":4000})"),
                              16),
                      "run past the end of the data (16 bytes)"));
  EXPECT_TRUE(
      refused(rawPack(oneTensor(R"({"dtype":"float32","shape":[2],"offset":12,"nbytes":8})"), 16),
              "tensor 0: bytes 12 + 8 run past the end"));
  // An offset near 2^64 must not wrap around to the start of the data.
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"dtype":"float32","shape":[2],)"
                                        R"("offset":18446744073709551612,"nbytes":8})"),
                              16),
                      "run past the end"));
  // nbytes that disagrees with the shape, even when the bytes are there.
  EXPECT_TRUE(
      refused(rawPack(oneTensor(R"({"dtype":"float32","shape":[2],"offset":0,"nbytes":4})"), 16),
              "nbytes 4 does not match shape [2] of float32 (8 bytes)"));
  // A header length beyond the file.
  std::string bytes = rawPack(oneTensor(R"({"dtype":"float32","shape":[],"offset":0,)"
                                        R"("nbytes":4})"),
                              4);
  const std::uint64_t tooLong = bytes.size();
  bytes.replace(8, 8, reinterpret_cast<const char*>(&tooLong), 8);
  EXPECT_TRUE(refused(bytes, "header runs past the file"));
}

TEST(ValuePackHeader, NegativeAndNonIntegerDimensionsAreRefused) {
  EXPECT_TRUE(
      refused(rawPack(oneTensor(R"({"dtype":"float32","shape":[-1],"offset":0,"nbytes":0})")),
              "tensor 0: dimension 0 is -1, not a non-negative 64-bit integer"));
  // Two negatives multiply to a positive count that matches nbytes.
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"dtype":"float32","shape":[-2,-2],"offset":0,)"
                                        R"("nbytes":16})"),
                              16),
                      "dimension 0 is -2"));
  for (const char* dim : {"2.5", "1e30", "\"4\"", "true", "null", "[2]",
                          "9223372036854775808"}) {  // the last is 2^63: beyond int64
    EXPECT_TRUE(refused(rawPack(oneTensor(std::string(R"({"dtype":"uint8","shape":[1,)") + dim +
                                          R"(],"offset":0,"nbytes":1})"),
                                1),
                        "dimension 1 is "));
  }
}

TEST(ValuePackHeader, RankIsLimited) {
  const auto shapeOfOnes = [](int rank) {
    std::string shape = "[";
    for (int i = 0; i < rank; ++i) shape += i ? ",1" : "1";
    return shape + "]";
  };
  const auto entry = [&](int rank) {
    return rawPack(oneTensor(R"({"dtype":"uint8","shape":)" + shapeOfOnes(rank) +
                             R"(,"offset":0,"nbytes":1})"),
                   1);
  };
  EXPECT_EQ(errorOf(entry(64)), "");
  EXPECT_TRUE(refused(entry(65), "tensor 0: rank 65 exceeds 64"));
  EXPECT_TRUE(refused(entry(1'000'000), "rank 1000000 exceeds 64"));
}

TEST(ValuePackHeader, MalformedEntriesAreValuePackErrors) {
  // Each of these once escaped as nlohmann::json's own exception, or converted out of range.
  EXPECT_TRUE(refused(rawPack(R"({"value":null,"tensors":{"a":1}})"), "needs a \"value\" and"));
  EXPECT_TRUE(refused(rawPack(R"({"tensors":[]})"), "needs a \"value\" and"));
  EXPECT_TRUE(
      refused(rawPack(R"({"value":null,"tensors":[7]})"), "tensor 0: entry is not an object"));
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"dtype":32,"shape":[1],"offset":0,"nbytes":4})"), 4),
                      "unknown dtype 32"));
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"shape":[1],"offset":0,"nbytes":4})"), 4),
                      "unknown dtype (none)"));
  EXPECT_TRUE(refused(rawPack(oneTensor(R"({"dtype":"uint8","shape":3,"offset":0,"nbytes":3})"), 3),
                      "shape is not a list"));
  for (const char* counts :
       {R"("offset":-1,"nbytes":1)", R"("offset":0.5,"nbytes":1)", R"("offset":0,"nbytes":"1")",
        R"("nbytes":1)", R"("offset":0,"nbytes":1e300)"}) {
    EXPECT_TRUE(refused(
        rawPack(oneTensor(std::string(R"({"dtype":"uint8","shape":[1],)") + counts + "}"), 1),
        "offset and nbytes must be non-negative integers"));
  }
  const std::string entry = R"([{"dtype":"uint8","shape":[1],"offset":0,"nbytes":1}])";
  for (const char* ref : {"1", "-1", "0.5", "\"0\"", "1e300"}) {
    EXPECT_TRUE(refused(rawPack(std::string(R"({"value":{"list":[{"tensor":)") + ref +
                                    R"(}]},"tensors":)" + entry + "}",
                                1),
                        "value refers to tensor "));
  }
}

TEST(ValuePackHeader, DeeplyNestedValuesAreRefusedBeforeAnyWalk) {
  const auto nested = [](int depth) {
    return rawPack(R"({"tensors":[],"value":)" + std::string(depth, '[') + std::string(depth, ']') +
                   "}");
  };
  EXPECT_EQ(errorOf(nested(500)), "");
  // A million levels overflowed the stack of the walk that looks for tensor references.
  EXPECT_TRUE(refused(nested(1'000'000), "header nests deeper than 1000 levels"));
}

TEST(ValuePackHeader, LoadNamesTheFile) {
  const test::TempDir dir;
  const std::string path = (dir.path() / "lying.ctp").string();
  std::ofstream(path, std::ios::binary)
      << rawPack(oneTensor(R"({"dtype":"float32","shape":[1000],"offset":0,"nbytes":4000})"), 8);
  try {
    ValuePack::load(path);
    FAIL() << "a pack claiming 4000 bytes of 8 was loaded";
  } catch (const ValuePackError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": tensor 0: bytes 0 + 4000 run past", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace crucible
