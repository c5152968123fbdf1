#pragma once
// A long-lived child that takes JSON lines on stdin and answers with JSON lines on stdout (the
// service's lanes). It runs through run() (process.h) on a thread of its own: its own process
// group, killed whole when this ends; its stderr drained and capped. Lines that are not JSON
// objects are skipped. Nothing the child does throws here: an ended child shows as not running.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/proc/process.h"

namespace crucible::proc {

class LineChild {
 public:
  /// Starts `argv` (argv[0] absolute) with `env` as its whole environment.
  LineChild(std::vector<std::string> argv, std::map<std::string, std::string> env);
  /// Closes its stdin, gives it `grace` to end, then kills its process group.
  ~LineChild();
  LineChild(const LineChild&) = delete;
  LineChild& operator=(const LineChild&) = delete;

  /// Writes one line (a newline is added); false once the child has ended.
  bool send(const nlohmann::json& message);
  /// The next line the child wrote; nullopt at `deadline`, on a stop request, or once it has
  /// ended with nothing left to read.
  std::optional<nlohmann::json> next(std::chrono::steady_clock::time_point deadline,
                                     std::stop_token stop = {});
  bool running() const;
  /// The child's process group (its pid), 0 before it started.
  int processGroup() const;
  /// Kills the whole group now.
  void kill();
  /// How it ended and the last lines of its stderr; "" while it runs.
  std::string endedMessage() const;

  std::chrono::milliseconds grace{std::chrono::seconds(5)};

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread runner_;
};

/// Appends `bytes` to `partial` and returns the JSON objects of the whole lines in it (blank
/// lines and lines that are not JSON objects skipped); `partial` keeps what follows the last
/// newline.
std::vector<nlohmann::json> takeJsonLines(std::string& partial, std::string_view bytes);

/// This process's environment as a map (children that inherit it, with changes).
std::map<std::string, std::string> currentEnvironment();

}  // namespace crucible::proc
