// The text of one candidate as its tokens arrive: finds stop strings, and releases text for
// streaming only when it can no longer change: a UTF-8 sequence still missing bytes, or a tail
// that could be the start of a stop string, is held back until the next token decides it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace crucible::llm {

class CandidateText {
 public:
  explicit CandidateText(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Appends a token's bytes; returns the newly releasable text (possibly empty).
  std::string append(const std::string& bytes);
  bool stopped() const { return stopped_; }
  // The whole text so far (cut before the stop string when one was found).
  const std::string& text() const { return text_; }
  // What is still held back, released when the candidate ends without a stop.
  std::string flush();

 private:
  std::vector<std::string> stops_;
  std::string text_;
  std::size_t released_ = 0;
  bool stopped_ = false;
};

}  // namespace crucible::llm
