#include "core/verify/extract.h"

#include <algorithm>
#include <vector>

namespace crucible {

namespace {
struct Block {
  std::size_t fenceStart;  // offset of the opening ```
  std::size_t codeStart;
  std::size_t codeEnd;
};

std::vector<Block> fencedBlocks(std::string_view text) {
  std::vector<Block> blocks;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find("```", pos);
    if (open == std::string_view::npos) break;
    // Only fences at the start of a line count.
    if (open != 0 && text[open - 1] != '\n') {
      pos = open + 3;
      continue;
    }
    const std::size_t lineEnd = text.find('\n', open);
    if (lineEnd == std::string_view::npos) break;
    std::size_t close = lineEnd;
    while (true) {
      close = text.find("```", close + 1);
      if (close == std::string_view::npos || text[close - 1] == '\n') break;
    }
    if (close == std::string_view::npos) {  // unterminated: the rest is code
      blocks.push_back({open, lineEnd + 1, text.size()});
      break;
    }
    blocks.push_back({open, lineEnd + 1, close});
    pos = close + 3;
  }
  return blocks;
}

bool definesModelNew(std::string_view code) {
  return code.find("class ModelNew") != std::string_view::npos;
}

std::string stripThinkTags(std::string text) {
  for (const char* tag : {"<think>", "</think>"}) {
    for (auto at = text.find(tag); at != std::string::npos; at = text.find(tag)) {
      text.erase(at, std::string_view(tag).size());
    }
  }
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

int lineAt(std::string_view text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

/// A reasoning model's unfenced answer: "<think>plan</think>" followed by the program.
std::optional<ExtractedCandidate> splitThinkBlock(std::string_view text) {
  constexpr std::string_view kClose = "</think>";
  const auto close = text.find(kClose);
  if (close == std::string_view::npos) return std::nullopt;
  std::size_t codeStart = close + kClose.size();
  while (codeStart < text.size() && (text[codeStart] == '\n' || text[codeStart] == '\r')) {
    ++codeStart;
  }
  ExtractedCandidate result;
  result.code = std::string(text.substr(codeStart));
  result.plan = stripThinkTags(std::string(text.substr(0, close)));
  result.fromResponse = true;
  result.firstCodeLine = lineAt(text, codeStart);
  return result;
}
}  // namespace

std::optional<ExtractedCandidate> extractCandidate(std::string_view text) {
  const auto blocks = fencedBlocks(text);
  if (blocks.empty()) {
    if (auto split = splitThinkBlock(text)) return split;
    return ExtractedCandidate{std::string(text), "", false, 1};
  }
  auto chosen = std::find_if(blocks.rbegin(), blocks.rend(), [&](const Block& b) {
    return definesModelNew(text.substr(b.codeStart, b.codeEnd - b.codeStart));
  });
  if (chosen == blocks.rend()) {
    if (definesModelNew(text)) return ExtractedCandidate{std::string(text), "", false, 1};
    return std::nullopt;
  }
  ExtractedCandidate result;
  result.code = std::string(text.substr(chosen->codeStart, chosen->codeEnd - chosen->codeStart));
  result.plan = stripThinkTags(std::string(text.substr(0, chosen->fenceStart)));
  result.fromResponse = true;
  result.firstCodeLine = lineAt(text, chosen->codeStart);
  return result;
}

}  // namespace crucible
