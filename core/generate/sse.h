#pragma once
// Server-sent events (the streaming format of chat completions), read incrementally: bytes go in
// as the network delivers them, each complete event's data comes out.

#include <functional>
#include <string>
#include <string_view>

namespace crucible::generate {

class SseReader {
 public:
  /// `onEvent` gets each event's data (its "data:" lines joined with '\n').
  explicit SseReader(std::function<void(const std::string& data)> onEvent)
      : onEvent_(std::move(onEvent)) {}

  /// Feeds the next bytes; calls onEvent for every event they complete.
  void feed(std::string_view bytes);
  /// The stream ended: an event not yet closed by a blank line is delivered.
  void finish();
  /// Events delivered so far.
  int events() const { return events_; }

 private:
  void line(std::string_view text);
  void dispatch();

  std::function<void(const std::string&)> onEvent_;
  std::string pending_;  // an incomplete line
  std::string data_;     // the current event's data
  bool hasData_ = false;
  int events_ = 0;
};

}  // namespace crucible::generate
