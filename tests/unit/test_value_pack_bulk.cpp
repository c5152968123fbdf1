// Bulk access to a pack's tensors (ranges converted to double, bit patterns counted, raw bytes)
// agrees with element-by-element access for every dtype, and packs read whole from files of
// several read blocks keep every byte.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/util/file_bytes.h"
#include "core/verify/value_pack.h"
#include "pack_writer.h"
#include "temp_dir.h"

namespace crucible {
namespace {

/// Bytes with every pattern a dtype can hold, in a pseudo-random order.
std::vector<unsigned char> mixedBytes(std::size_t n) {
  std::vector<unsigned char> bytes(n);
  std::uint64_t state = 7;
  for (auto& b : bytes) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    b = static_cast<unsigned char>(state >> 56);
  }
  return bytes;
}

bool sameDouble(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) ||
         std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
}

TEST(ValuePackBulk, RangesConvertAndCountAsElementsDo) {
  for (const char* name : {"float64", "float32", "float16", "bfloat16", "int64", "int32", "int16",
                           "int8", "uint8", "bool"}) {
    SCOPED_TRACE(name);
    const DType dtype = *dtypeFromString(name);
    const std::size_t n = 5000;
    test::PackTensor t{name, {static_cast<std::int64_t>(n)}, mixedBytes(n * elementSize(dtype))};
    // A value planted a few times to count, the poison pattern where the dtype has one.
    const std::uint64_t planted = poisonBits(dtype).value_or(1);
    for (std::size_t i : {3u, 17u, 4999u}) {
      std::memcpy(t.bytes.data() + i * elementSize(dtype), &planted, elementSize(dtype));
    }
    const auto pack = ValuePack::parse(test::packBytes({t}), "mem");
    const TensorData& data = pack.tensors()[0];
    EXPECT_EQ(data.bytes().size(), n * elementSize(dtype));
    for (std::size_t first : {std::size_t{0}, std::size_t{1}, std::size_t{1234}}) {
      const std::size_t count = n - first - 7;
      std::vector<double> out(count);
      data.toDoubles(first, count, out.data());
      std::uint64_t expected = 0;
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_TRUE(sameDouble(out[i], data.at(first + i))) << first + i;
        expected += data.bitsAt(first + i) == planted;
      }
      EXPECT_EQ(data.countBits(first, count, planted), expected);
      EXPECT_GE(expected, first == 0 ? 2u : 0u);
    }
  }
}

TEST(ValuePackBulk, EveryHalfPrecisionValueWidensExactly) {
  // Every one of the 65,536 patterns against the textbook formula.
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  const auto pack = ValuePack::parse(test::packBytes({test::tensorOf("float16", all)}), "mem");
  std::vector<double> out(all.size());
  pack.tensors()[0].toDoubles(0, all.size(), out.data());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const int sign = (i >> 15) & 1, exponent = (i >> 10) & 0x1F, mantissa = i & 0x3FF;
    double want = exponent == 0    ? std::ldexp(mantissa, -24)
                  : exponent == 31 ? (mantissa ? std::numeric_limits<double>::quiet_NaN()
                                               : std::numeric_limits<double>::infinity())
                                   : std::ldexp(mantissa | 0x400, exponent - 25);
    if (sign) want = -want;
    ASSERT_TRUE(sameDouble(out[i], want)) << std::hex << i;
    ASSERT_TRUE(sameDouble(pack.tensors()[0].at(i), want)) << std::hex << i;
  }
}

TEST(ValuePackBulk, CountingAPatternWiderThanTheDTypeFindsNothing) {
  const auto pack =
      ValuePack::parse(test::packBytes({test::tensorOf<std::uint8_t>("uint8", {1, 2, 1})}), "m");
  EXPECT_EQ(pack.tensors()[0].countBits(0, 3, 1), 2u);
  EXPECT_EQ(pack.tensors()[0].countBits(0, 3, 0x101), 0u);
}

TEST(FileBytes, AFileOfSeveralReadBlocksIsReadWholeAndSeenInOrder) {
  const test::TempDir dir;
  const std::string path = (dir.path() / "big.ctp").string();
  std::vector<float> values(3'000'001);  // 12 MB: three read blocks and a bit
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  test::writePack(path, {test::floats(values)});
  std::string seen;
  const auto file = readFileBytes(path, [&](std::string_view block) { seen += block; });
  ASSERT_TRUE(file);
  std::ifstream in(path, std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(file->view(), whole);
  EXPECT_EQ(seen, whole);
  const auto pack = ValuePack::load(path);
  ASSERT_EQ(pack.tensors()[0].numel(), values.size());
  EXPECT_EQ(pack.tensors()[0].at(2'999'999), 2'999'999.0);
  EXPECT_FALSE(readFileBytes((dir.path() / "missing").string()));
}

TEST(FileBytes, EmptyAndSmallFiles) {
  const test::TempDir dir;
  const auto empty = dir.path() / "empty";
  std::ofstream(empty).close();
  auto file = readFileBytes(empty.string());
  ASSERT_TRUE(file);
  EXPECT_EQ(file->size, 0u);
  const auto small = dir.path() / "small";
  std::ofstream(small) << "abc";
  file = readFileBytes(small.string());
  ASSERT_TRUE(file);
  EXPECT_EQ(file->view(), "abc");
}

TEST(FileBytes, AFileWithoutAKnownSizeIsReadToItsEnd) {
  // A pipe reports no size and delivers its bytes in pieces: the buffer grows as they come.
  const test::TempDir dir;
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string sent(10'000'000, '\0');
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>(i * 31 % 251);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << sent; });
  std::string seen;
  const auto file = readFileBytes(fifo.string(), [&](std::string_view block) { seen += block; });
  writer.join();
  ASSERT_TRUE(file);
  EXPECT_TRUE(file->view() == sent);
  EXPECT_TRUE(seen == sent);
}

}  // namespace
}  // namespace crucible
