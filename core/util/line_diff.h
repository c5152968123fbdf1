#pragma once
// Which lines two texts share and which are only in one of them (a longest-common-subsequence
// diff of lines), how their lines line up, and which words of a changed line changed: for
// showing two candidates side by side.

#include <string_view>
#include <utility>
#include <vector>

namespace crucible {

struct LineDiff {
  std::vector<int> onlyInLeft;   // 0-based lines of the left text not in the common subsequence
  std::vector<int> onlyInRight;  // the same for the right text
  std::vector<std::pair<int, int>> common;  // (left, right) lines that match, in order
  // (left, right) changed lines that stand in each other's place: between the same two common
  // lines, the k-th changed line of each side (for a word-level diff of the pair).
  std::vector<std::pair<int, int>> changedPairs;
};

/// Diffs two texts line by line. Texts beyond 4000 lines each are compared line by line at the
/// same positions instead (the table would be too large).
LineDiff diffLines(std::string_view left, std::string_view right);

/// The line of the other side that stands where `line` of one side does (`fromLeft`: `line` is
/// a left line): the matching line, or as far past the last common line before it.
int alignedLine(const LineDiff& diff, int line, bool fromLeft);

/// The parts of two lines that differ: spans (byte offset, length) of the words, runs of
/// space and single symbols outside their longest common subsequence.
struct WordDiff {
  std::vector<std::pair<int, int>> left, right;
};
WordDiff diffWords(std::string_view left, std::string_view right);

}  // namespace crucible
