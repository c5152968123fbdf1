#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>

#include "core/verify/compare.h"
#include "core/verify/value_pack.h"
#include "pack_writer.h"
#include "temp_dir.h"

namespace crucible {
namespace {

using test::floats;
using test::writePack;

class CompareTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) { return (dir_.path() / name).string(); }
  ValuePack pack(const std::string& name, std::vector<test::PackTensor> tensors) {
    const auto p = path(name);
    writePack(p, tensors);
    return ValuePack::load(p);
  }
  test::TempDir dir_{"crucible-compare"};
};

TEST_F(CompareTest, EqualWithinToleranceMatches) {
  auto e = pack("e", {floats({1.0f, 2.0f, 3.0f})});
  auto a = pack("a", {floats({1.00005f, 2.0f, 3.0002f})});
  auto c = comparePacks(e, a, ToleranceTable{});
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.tensors[0].mismatches, 0u);
}

TEST_F(CompareTest, AbsoluteToleranceFollowsTheOutputsScale) {
  // A long fp32 dot product: outputs of size ~180, one of them cancelling to near zero, where a
  // different summation order leaves an error of the others' size (5e-4, beyond 1e-4 + 1e-4*0).
  auto e = pack("e", {floats({180.0f, -175.0f, 0.001f, 190.0f})});
  auto a = pack("a", {floats({180.0f, -175.0f, 0.0015f, 190.0f})});
  auto c = comparePacks(e, a, ToleranceTable{});
  EXPECT_TRUE(c.ok());
  EXPECT_NEAR(c.tensors[0].atol, 1e-4 * std::sqrt((180.0 * 180 + 175.0 * 175 + 190.0 * 190) / 4),
              1e-6);
  EXPECT_EQ(c.toJson()["tensors"][0]["atol"], c.tensors[0].atol);
  // Still an error of the output's own size fails: a term dropped, a bfloat16 product.
  auto wrong = pack("w", {floats({180.0f, -175.0f, 0.05f, 190.0f})});
  EXPECT_FALSE(comparePacks(e, wrong, ToleranceTable{}).ok());
  auto coarse = pack("b", {floats({180.5f, -175.0f, 0.001f, 190.0f})});
  EXPECT_FALSE(comparePacks(e, coarse, ToleranceTable{}).ok());
  // Outputs of size 1 keep the plain tolerance.
  auto small = pack("s", {floats({1.0f, -1.0f, 0.0f, 1.0f})});
  auto off = pack("o", {floats({1.0f, -1.0f, 0.0002f, 1.0f})});
  EXPECT_FALSE(comparePacks(small, off, ToleranceTable{}).ok());
  EXPECT_DOUBLE_EQ(comparePacks(small, off, ToleranceTable{}).tensors[0].atol, 1e-4);
}

TEST_F(CompareTest, MismatchIsCountedWithItsPosition) {
  auto e = pack("e", {floats({1, 2, 3, 4})});
  auto a = pack("a", {floats({1, 2, 3.5f, 4})});
  auto c = comparePacks(e, a, ToleranceTable{});
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.tensors[0].mismatches, 1u);
  EXPECT_EQ(c.tensors[0].firstMismatch, 2u);
  EXPECT_NEAR(c.tensors[0].maxAbsError, 0.5, 1e-9);
}

TEST_F(CompareTest, NanNeverMatchesAndPoisonIsCounted) {
  const float poison = std::bit_cast<float>(0x7FC0DEADu);
  auto e = pack("e", {floats({1, 2, 3, 4})});
  auto a = pack("a", {floats({1, 2, poison, poison})});
  auto c = comparePacks(e, a, ToleranceTable{});
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.poisoned(), 2u);
  auto n = pack("n", {floats({1, 2, NAN, 4})});
  EXPECT_FALSE(comparePacks(e, n, ToleranceTable{}).ok());
  EXPECT_EQ(comparePacks(e, n, ToleranceTable{}).poisoned(), 0u);
}

TEST_F(CompareTest, ShapeAndCountMismatchesAreStructural) {
  auto e = pack("e", {floats({1, 2, 3, 4}, {2, 2})});
  auto a = pack("a", {floats({1, 2, 3, 4}, {4})});
  auto c = comparePacks(e, a, ToleranceTable{});
  EXPECT_FALSE(c.ok());
  EXPECT_FALSE(c.tensors[0].shapeMatch);
  auto two = pack("two", {floats({1}), floats({2})});
  auto one = pack("one", {floats({1})});
  EXPECT_FALSE(comparePacks(two, one, ToleranceTable{}).structureMatch);
}

TEST_F(CompareTest, HalfPrecisionUsesItsOwnTolerance) {
  test::PackTensor e{"float16", {2}, {0x00, 0x3C, 0x00, 0x40}};  // 1.0, 2.0
  test::PackTensor a{"float16", {2}, {0x01, 0x3C, 0x00, 0x40}};  // 1.00098, 2.0
  auto pe = pack("he", {e});
  auto pa = pack("ha", {a});
  EXPECT_NEAR(pa.tensors()[0].at(0), 1.0009765625, 1e-12);
  EXPECT_TRUE(comparePacks(pe, pa, ToleranceTable{}).ok());
}

TEST_F(CompareTest, BitwiseEqualityIsExact) {
  auto a = pack("a", {floats({1, 2})});
  auto b = pack("b", {floats({1, 2})});
  auto c = pack("c", {floats({1, 2.0000002f})});
  EXPECT_TRUE(bitwiseEqual(a, b));
  EXPECT_FALSE(bitwiseEqual(a, c));
}

TEST_F(CompareTest, CorruptPacksAreRejectedWithTheFileName) {
  const auto p = path("corrupt");
  {
    std::ofstream out(p);
    out << "not a pack at all";
  }
  try {
    ValuePack::load(p);
    FAIL() << "expected ValuePackError";
  } catch (const ValuePackError& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos);
  }
  test::PackTensor lying{"float32", {100}, {0, 0, 0, 0}};
  writePack(path("short"), {lying});
  EXPECT_THROW(ValuePack::load(path("short")), ValuePackError);
}

TEST_F(CompareTest, DegenerateReferencesAreRecognised) {
  auto tiny1 = pack("t1", {floats({1e-6f, -2e-6f, 3e-6f, 0})});
  auto tiny2 = pack("t2", {floats({2e-6f, 1e-6f, -1e-6f, 0})});
  auto d = assessDegeneracy({&tiny1, &tiny2}, ToleranceTable{});
  EXPECT_TRUE(d.degenerate);
  EXPECT_GT(d.nearZeroFraction, 0.99);

  auto constant1 = pack("c1", {floats({5, 5, 5, 5})});
  auto constant2 = pack("c2", {floats({5, 5, 5, 5})});
  EXPECT_TRUE(assessDegeneracy({&constant1, &constant2}, ToleranceTable{}).degenerate);

  auto healthy1 = pack("h1", {floats({1, -2, 3, 0.5f})});
  auto healthy2 = pack("h2", {floats({-1, 2, 0.25f, 4})});
  EXPECT_FALSE(assessDegeneracy({&healthy1, &healthy2}, ToleranceTable{}).degenerate);
}

TEST_F(CompareTest, RelativeRuleRejectsZerosForTinyOutputs) {
  auto e = pack("e", {floats({1e-6f, 2e-6f, 3e-6f})});
  auto zeros = pack("z", {floats({0, 0, 0})});
  EXPECT_TRUE(comparePacks(e, zeros, ToleranceTable{}).ok());  // why absolute tolerance fails
  EXPECT_FALSE(comparePacks(e, zeros, ToleranceTable{}, MatchRule::RelativeNorm).ok());
  auto close = pack("c", {floats({1.0000001e-6f, 2e-6f, 3e-6f})});
  EXPECT_TRUE(comparePacks(e, close, ToleranceTable{}, MatchRule::RelativeNorm).ok());
}

}  // namespace
}  // namespace crucible
