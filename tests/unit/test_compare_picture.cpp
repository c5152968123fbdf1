// The picture of a mismatch that the GUI draws: the error histogram by decade and the map of
// where mismatching elements are, kept in JSON only for a tensor that mismatches.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/verify/compare.h"
#include "pack_writer.h"
#include "temp_dir.h"

namespace crucible {
namespace {

class ComparePicture : public ::testing::Test {
 protected:
  ValuePack pack(const std::string& name, std::vector<test::PackTensor> tensors) {
    const auto p = (dir_.path() / name).string();
    test::writePack(p, tensors);
    return ValuePack::load(p);
  }
  test::TempDir dir_{"crucible-picture"};
};

TEST_F(ComparePicture, HistogramCountsEveryElementByDecade) {
  auto e = pack("e", {test::floats({0, 0, 0, 0, 0, 0}, {2, 3})});
  auto a = pack("a", {test::floats({0, 2e-6f, 0.5f, 0, 200, NAN}, {2, 3})});
  const auto c = comparePacks(e, a, ToleranceTable{});
  const auto& t = c.tensors[0];
  ASSERT_EQ(t.errorHistogram.size(), 12u);
  EXPECT_EQ(t.errorHistogram[0], 2u);   // exact zeros
  EXPECT_EQ(t.errorHistogram[3], 1u);   // 2e-6 in [1e-6, 1e-5)
  EXPECT_EQ(t.errorHistogram[8], 1u);   // 0.5 in [1e-1, 1)
  EXPECT_EQ(t.errorHistogram[11], 2u);  // 200 and NaN
  EXPECT_EQ(t.rows, 2u);
  EXPECT_EQ(t.cols, 3u);
  ASSERT_EQ(t.mismatchMap.size(), 6u);
  EXPECT_EQ(t.mismatchMap, (std::vector<double>{0, 0, 1, 0, 1, 1}));
  const auto json = c.toJson()["tensors"][0];
  EXPECT_EQ(json["error_histogram"]["counts"].size(), 12u);
  EXPECT_EQ(json["mismatch_map"]["map_cols"], 3);
}

TEST_F(ComparePicture, LargeTensorsFoldIntoCellsAndMatchesKeepNoPicture) {
  std::vector<float> zeros(64 * 64, 0), wrongRow = zeros;
  for (int c = 0; c < 64; ++c) wrongRow[5 * 64 + c] = 1;
  auto e = pack("e2", {test::floats(zeros, {64, 64})});
  auto a = pack("a2", {test::floats(wrongRow, {64, 64})});
  const auto t = comparePacks(e, a, ToleranceTable{}).tensors[0];
  EXPECT_EQ(t.mapRows, 32u);
  EXPECT_EQ(t.mapCols, 32u);
  EXPECT_DOUBLE_EQ(t.mismatchMap[2 * 32 + 7], 0.5);  // rows 4-5 share cell row 2
  EXPECT_DOUBLE_EQ(t.mismatchMap[0], 0);
  const auto same = comparePacks(e, e, ToleranceTable{}).toJson()["tensors"][0];
  EXPECT_FALSE(same.contains("error_histogram"));
  EXPECT_FALSE(same.contains("mismatch_map"));
}

}  // namespace
}  // namespace crucible
