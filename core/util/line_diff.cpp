#include "core/util/line_diff.h"

#include <algorithm>
#include <cstdint>

namespace crucible {

namespace {
std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}
}  // namespace

LineDiff diffLines(std::string_view left, std::string_view right) {
  const auto a = splitLines(left), b = splitLines(right);
  const std::size_t n = a.size(), m = b.size();
  LineDiff diff;
  constexpr std::size_t kMaxLines = 4000;
  if (n > kMaxLines || m > kMaxLines) {
    for (std::size_t i = 0; i < std::max(n, m); ++i) {
      const bool same = i < n && i < m && a[i] == b[i];
      if (!same && i < n) diff.onlyInLeft.push_back(static_cast<int>(i));
      if (!same && i < m) diff.onlyInRight.push_back(static_cast<int>(i));
    }
    return diff;
  }
  // lcs[i][j]: length of the common subsequence of a[i..] and b[j..].
  std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return lcs[i * (m + 1) + j]; };
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  std::size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] == b[j]) {
      ++i;
      ++j;
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      diff.onlyInLeft.push_back(static_cast<int>(i++));
    } else {
      diff.onlyInRight.push_back(static_cast<int>(j++));
    }
  }
  for (; i < n; ++i) diff.onlyInLeft.push_back(static_cast<int>(i));
  for (; j < m; ++j) diff.onlyInRight.push_back(static_cast<int>(j));
  return diff;
}

}  // namespace crucible
