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

TEST(LineDiff, CommonLinesPairChangedOnesAndAlign) {
  const std::string left = "a\nb\nc\nd\n";
  const std::string right = "a\nB\nx\nc\nd\n";
  const LineDiff diff = diffLines(left, right);
  const std::vector<std::pair<int, int>> common = {{0, 0}, {2, 3}, {3, 4}};
  EXPECT_EQ(diff.common, common);
  const std::vector<std::pair<int, int>> pairs = {{1, 1}};  // b stands where B does; x is new
  EXPECT_EQ(diff.changedPairs, pairs);
  EXPECT_EQ(alignedLine(diff, 2, true), 3);   // c is right's line 3
  EXPECT_EQ(alignedLine(diff, 3, false), 2);  // x (right 2) sits past left's a and b
  EXPECT_EQ(alignedLine(diff, 4, false), 3);
  EXPECT_EQ(alignedLine(diff, 9, true), 10);  // past the end: as far past the last common line
}

TEST(LineDiff, WordsThatChangedInALine) {
  const WordDiff diff = diffWords("    y = x * 1.5 + b", "    y = x * 2.5 + bias");
  const std::vector<std::pair<int, int>> left = {{12, 1}, {18, 1}};  // "1" of 1.5, "b"
  const std::vector<std::pair<int, int>> right = {{12, 1}, {18, 4}};
  EXPECT_EQ(diff.left, left);
  EXPECT_EQ(diff.right, right);
  const WordDiff same = diffWords("abc d", "abc d");
  EXPECT_TRUE(same.left.empty() && same.right.empty());
}

}  // namespace
}  // namespace crucible
