#include <gtest/gtest.h>

#include "core/util/line_diff.h"

namespace crucible {
namespace {

TEST(LineDiff, MarksOnlyTheLinesOneSideLacks) {
  const auto d = diffLines("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n");
  EXPECT_EQ(d.onlyInLeft, (std::vector<int>{1}));
  EXPECT_EQ(d.onlyInRight, (std::vector<int>{1, 4}));
}

TEST(LineDiff, IdenticalAndEmptyTexts) {
  EXPECT_TRUE(diffLines("x\ny", "x\ny").onlyInLeft.empty());
  EXPECT_TRUE(diffLines("x\ny", "x\ny").onlyInRight.empty());
  EXPECT_EQ(diffLines("", "p\nq").onlyInRight, (std::vector<int>{0, 1}));
  EXPECT_EQ(diffLines("p\nq", "").onlyInLeft, (std::vector<int>{0, 1}));
}

TEST(LineDiff, InsertedBlockKeepsTheRestAligned) {
  const auto d = diffLines("1\n2\n3", "1\nx\ny\n2\n3");
  EXPECT_TRUE(d.onlyInLeft.empty());
  EXPECT_EQ(d.onlyInRight, (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace crucible
