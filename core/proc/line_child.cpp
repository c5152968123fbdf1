#include "core/proc/line_child.h"

#include <string.h>

#include <atomic>

extern char** environ;  // NOLINT: children inherit this process's environment, with changes

namespace crucible::proc {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {
constexpr std::size_t kStderrCap = 64 * 1024;
}

struct LineChild::State {
  mutable std::mutex mutex;
  std::condition_variable_any changed;
  std::deque<json> lines;
  std::string partial;  // stdout after the last newline
  bool exited = false;
  std::atomic<int> group{0};
  ExecutionResult result;
  std::shared_ptr<StdinFeed> feed = std::make_shared<StdinFeed>();
  std::stop_source kill;  // stops run(): kills the whole group

  void take(std::string_view bytes) {
    std::lock_guard lock(mutex);
    for (json& line : takeJsonLines(partial, bytes)) lines.push_back(std::move(line));
    changed.notify_all();
  }
};

std::vector<json> takeJsonLines(std::string& partial, std::string_view bytes) {
  partial.append(bytes);
  std::vector<json> lines;
  std::size_t start = 0;
  for (auto nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', start)) {
    json line = json::parse(partial.substr(start, nl - start), nullptr, false);
    start = nl + 1;
    if (line.is_object()) lines.push_back(std::move(line));
  }
  partial.erase(0, start);
  return lines;
}

std::map<std::string, std::string> currentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

LineChild::LineChild(std::vector<std::string> argv, std::map<std::string, std::string> env)
    : state_(std::make_shared<State>()) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.env = std::move(env);
  spec.resultChannel = false;
  spec.limits.wallTimeout = std::chrono::milliseconds::max();  // lives as long as it is wanted
  spec.limits.outputCapBytes = kStderrCap;
  spec.stdinFeed = state_->feed;
  spec.onStdout = [state = state_.get()](std::string_view bytes) { state->take(bytes); };
  spec.onStarted = [state = state_.get()](int group) { state->group = group; };
  runner_ = std::thread([state = state_, spec = std::move(spec)] {
    ExecutionResult result = run(spec, state->kill.get_token());
    std::lock_guard lock(state->mutex);
    state->result = std::move(result);
    state->exited = true;
    state->changed.notify_all();
  });
}

LineChild::~LineChild() {
  state_->feed->close();
  {
    std::unique_lock lock(state_->mutex);
    if (!state_->changed.wait_for(lock, grace, [&] { return state_->exited; })) {
      lock.unlock();
      state_->kill.request_stop();
    }
  }
  runner_.join();
}

bool LineChild::send(const json& message) {
  if (!running()) return false;
  return state_->feed->write(message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

std::optional<json> LineChild::next(Clock::time_point deadline, std::stop_token stop) {
  std::unique_lock lock(state_->mutex);
  state_->changed.wait_until(lock, stop, deadline,
                             [&] { return !state_->lines.empty() || state_->exited; });
  if (state_->lines.empty()) return std::nullopt;
  json line = std::move(state_->lines.front());
  state_->lines.pop_front();
  return line;
}

bool LineChild::running() const {
  std::lock_guard lock(state_->mutex);
  return !state_->exited;
}

int LineChild::processGroup() const {
  return state_->group;
}

void LineChild::kill() {
  state_->kill.request_stop();
}

std::string LineChild::endedMessage() const {
  std::lock_guard lock(state_->mutex);
  if (!state_->exited) return "";
  const ExecutionResult& r = state_->result;
  std::string how = r.launchFailed ? "could not start: " + r.launchError
                    : r.termSignal != 0
                        ? std::string("killed by signal ") + std::to_string(r.termSignal) + " (" +
                              strsignal(r.termSignal) + ")"
                        : "exited with code " + std::to_string(r.exitCode);
  std::string tail =
      r.stderrText.size() > 600 ? r.stderrText.substr(r.stderrText.size() - 600) : r.stderrText;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return tail.empty() ? how : how + "; its last words: " + tail;
}

}  // namespace crucible::proc
