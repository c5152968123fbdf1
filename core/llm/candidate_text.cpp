#include "core/llm/candidate_text.h"

#include <algorithm>

#include "core/llm/utf8.h"

namespace crucible::llm {

std::string CandidateText::append(const std::string& bytes) {
  if (stopped_) return {};
  text_ += bytes;
  // A stop string may straddle the old and new bytes: search from where it could begin.
  for (const std::string& stop : stops_) {
    if (stop.empty()) continue;
    const std::size_t from = released_ > stop.size() ? released_ - stop.size() : 0;
    const auto at = text_.find(stop, from);
    if (at != std::string::npos) {
      text_.resize(at);
      stopped_ = true;
    }
  }
  std::size_t safe = text_.size();
  if (!stopped_) {
    safe -= incompleteUtf8Tail(text_);
    // Hold back the longest tail that is a proper prefix of some stop string.
    std::size_t hold = 0;
    for (const std::string& stop : stops_)
      for (std::size_t len = std::min(stop.empty() ? 0 : stop.size() - 1, safe); len > hold; --len)
        if (text_.compare(safe - len, len, stop, 0, len) == 0) {
          hold = len;
          break;
        }
    safe -= hold;
  }
  if (safe <= released_) return {};
  std::string delta = text_.substr(released_, safe - released_);
  released_ = safe;
  return delta;
}

std::string CandidateText::flush() {
  std::string rest = released_ < text_.size() ? text_.substr(released_) : std::string();
  released_ = text_.size();
  return rest;
}

}  // namespace crucible::llm
