#include "core/generate/sse.h"

namespace crucible::generate {

void SseReader::feed(std::string_view bytes) {
  pending_.append(bytes);
  std::size_t start = 0;
  while (true) {
    const std::size_t end = pending_.find('\n', start);
    if (end == std::string::npos) break;
    std::string_view text(pending_.data() + start, end - start);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    line(text);
    start = end + 1;
  }
  pending_.erase(0, start);
}

void SseReader::finish() {
  if (!pending_.empty()) {
    const std::string last = std::move(pending_);
    pending_.clear();
    line(last);
  }
  dispatch();
}

void SseReader::line(std::string_view text) {
  if (text.empty()) {  // a blank line ends an event
    dispatch();
    return;
  }
  if (text.front() == ':') return;  // a comment (keep-alive)
  const std::size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;  // event, id and retry say nothing a completion needs
  if (hasData_) data_ += '\n';
  data_ += value;
  hasData_ = true;
}

void SseReader::dispatch() {
  if (!hasData_) return;
  std::string data = std::move(data_);
  data_.clear();
  hasData_ = false;
  ++events_;
  onEvent_(data);
}

}  // namespace crucible::generate
