#include "core/util/line_diff.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>

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
// Between two common lines (and before the first, after the last), the k-th changed line of
// each side make a pair.
void pairChanged(LineDiff& diff) {
  std::size_t l = 0, r = 0;
  const auto pairUpTo = [&](int leftEnd, int rightEnd) {
    while (l < diff.onlyInLeft.size() && r < diff.onlyInRight.size() &&
           diff.onlyInLeft[l] < leftEnd && diff.onlyInRight[r] < rightEnd) {
      diff.changedPairs.emplace_back(diff.onlyInLeft[l++], diff.onlyInRight[r++]);
    }
    while (l < diff.onlyInLeft.size() && diff.onlyInLeft[l] < leftEnd) ++l;
    while (r < diff.onlyInRight.size() && diff.onlyInRight[r] < rightEnd) ++r;
  };
  for (const auto& [left, right] : diff.common) pairUpTo(left, right);
  pairUpTo(std::numeric_limits<int>::max(), std::numeric_limits<int>::max());
}

struct Word {
  std::string_view text;
  int offset = 0;
};

// Words (letters, digits, underscores), runs of space, and every other character alone.
std::vector<Word> splitWords(std::string_view line) {
  const auto wordChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  std::vector<Word> words;
  std::size_t i = 0;
  while (i < line.size()) {
    std::size_t end = i + 1;
    if (wordChar(line[i])) {
      while (end < line.size() && wordChar(line[end])) ++end;
    } else if (space(line[i])) {
      while (end < line.size() && space(line[end])) ++end;
    }
    words.push_back({line.substr(i, end - i), static_cast<int>(i)});
    i = end;
  }
  return words;
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
      if (same) diff.common.emplace_back(static_cast<int>(i), static_cast<int>(i));
      if (!same && i < n) diff.onlyInLeft.push_back(static_cast<int>(i));
      if (!same && i < m) diff.onlyInRight.push_back(static_cast<int>(i));
    }
    pairChanged(diff);
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
      diff.common.emplace_back(static_cast<int>(i++), static_cast<int>(j++));
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      diff.onlyInLeft.push_back(static_cast<int>(i++));
    } else {
      diff.onlyInRight.push_back(static_cast<int>(j++));
    }
  }
  for (; i < n; ++i) diff.onlyInLeft.push_back(static_cast<int>(i));
  for (; j < m; ++j) diff.onlyInRight.push_back(static_cast<int>(j));
  pairChanged(diff);
  return diff;
}

int alignedLine(const LineDiff& diff, int line, bool fromLeft) {
  int mine = -1, theirs = -1;  // the last common line at or before `line`, both sides
  for (const auto& [left, right] : diff.common) {
    const int own = fromLeft ? left : right;
    if (own > line) break;
    mine = own;
    theirs = fromLeft ? right : left;
  }
  return std::max(0, theirs + (line - mine));
}

WordDiff diffWords(std::string_view left, std::string_view right) {
  const auto a = splitWords(left), b = splitWords(right);
  const std::size_t n = a.size(), m = b.size();
  WordDiff diff;
  if (n * m > 1'000'000) {  // lines that long differ as wholes (the table would be too large)
    if (!left.empty()) diff.left.emplace_back(0, static_cast<int>(left.size()));
    if (!right.empty()) diff.right.emplace_back(0, static_cast<int>(right.size()));
    return diff;
  }
  std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return lcs[i * (m + 1) + j]; };
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      at(i, j) =
          a[i].text == b[j].text ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  const auto add = [](std::vector<std::pair<int, int>>& spans, const Word& w) {
    // Neighbouring changed words make one span.
    if (!spans.empty() && spans.back().first + spans.back().second == w.offset) {
      spans.back().second += static_cast<int>(w.text.size());
    } else {
      spans.emplace_back(w.offset, static_cast<int>(w.text.size()));
    }
  };
  std::size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i].text == b[j].text) {
      ++i;
      ++j;
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      add(diff.left, a[i++]);
    } else {
      add(diff.right, b[j++]);
    }
  }
  for (; i < n; ++i) add(diff.left, a[i]);
  for (; j < m; ++j) add(diff.right, b[j]);
  return diff;
}

}  // namespace crucible
