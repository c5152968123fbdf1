#pragma once
// Which lines two texts share and which are only in one of them (a longest-common-subsequence
// diff of lines), for showing two candidates side by side.

#include <string_view>
#include <vector>

namespace crucible {

struct LineDiff {
  std::vector<int> onlyInLeft;   // 0-based lines of the left text not in the common subsequence
  std::vector<int> onlyInRight;  // the same for the right text
};

/// Diffs two texts line by line. Texts beyond 4000 lines each are compared line by line at the
/// same positions instead (the table would be too large).
LineDiff diffLines(std::string_view left, std::string_view right);

}  // namespace crucible
