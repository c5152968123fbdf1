#include "core/generate/model_process.h"

#include <signal.h>
#include <string.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>

#include "core/proc/line_child.h"
#include "core/proc/process.h"
#include "core/util/locations.h"

namespace crucible::generate {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kQuitGrace = std::chrono::seconds(5);
constexpr std::size_t kStderrCap = 64 * 1024;

/// The last few non-empty lines of the engine's stderr: what it said before it went.
std::string lastLines(const std::string& text, int count) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = std::min(text.find('\n', start), text.size());
    if (nl > start) lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  std::string out;
  for (std::size_t i = lines.size() > static_cast<std::size_t>(count) ? lines.size() - count : 0;
       i < lines.size(); ++i) {
    out += (out.empty() ? "" : " | ") + lines[i];
  }
  return out;
}

std::string messageOf(const json& event) {
  return event.value("message", std::string("(no message)"));
}

}  // namespace

/// What the runner thread and the requesting thread share.
struct ModelProcess::State {
  std::mutex mutex;
  std::condition_variable_any changed;
  std::deque<json> events;
  std::string partial;  // stdout after the last newline
  bool exited = false;
  bool killedHere = false;  // this side ended it (shutdown, hang, stopped load)
  proc::ExecutionResult result;
  std::shared_ptr<proc::StdinFeed> feed = std::make_shared<proc::StdinFeed>();
  std::stop_source kill;  // stops run(): kills the whole group

  void take(std::string_view bytes) {
    std::lock_guard lock(mutex);
    for (json& event : proc::takeJsonLines(partial, bytes)) {
      // The protocol writes nothing else to stdout; anything that is not an event is skipped.
      if (event.contains("ev")) events.push_back(std::move(event));
    }
    changed.notify_all();
  }

  /// The next event; nullopt at `deadline` or on a stop request. Throws nothing: an ended process
  /// shows as `exited` with no events left.
  std::optional<json> next(std::stop_token stop, Clock::time_point deadline) {
    std::unique_lock lock(mutex);
    changed.wait_until(lock, stop, deadline, [&] { return !events.empty() || exited; });
    if (events.empty()) return std::nullopt;
    json event = std::move(events.front());
    events.pop_front();
    return event;
  }
};

ModelProcess::ModelProcess(ModelProcessOptions options)
    : options_(std::move(options)), state_(std::make_shared<State>()) {
  if (options_.binary.empty()) options_.binary = locateModelEngine();
  if (options_.binary.empty()) {
    throw GenerateError(
        "the embedded model engine (crucible-model) was not found next to " + executableDir() +
        "; build it (cmake --build --preset default --target crucible-model, which needs the "
        "project's torch) or set CRUCIBLE_MODEL_BIN");
  }
  proc::ProcessSpec spec;
  spec.argv = {options_.binary};
  spec.env = proc::currentEnvironment();
  spec.resultChannel = false;
  spec.limits.wallTimeout = std::chrono::milliseconds::max();  // lives as long as it is wanted
  spec.limits.outputCapBytes = kStderrCap;
  spec.limits.fileSizeBytes = 1ULL << 30;
  spec.stdinFeed = state_->feed;
  spec.onStdout = [state = state_.get()](std::string_view bytes) { state->take(bytes); };
  runner_ = std::thread([state = state_, spec = std::move(spec)] {
    proc::ExecutionResult result = proc::run(spec, state->kill.get_token());
    std::lock_guard lock(state->mutex);
    state->result = std::move(result);
    state->exited = true;
    state->changed.notify_all();
  });
}

ModelProcess::~ModelProcess() {
  send(json{{"op", "quit"}}.dump());
  state_->feed->close();
  {
    std::unique_lock lock(state_->mutex);
    if (!state_->changed.wait_for(lock, kQuitGrace, [&] { return state_->exited; })) {
      state_->killedHere = true;
      lock.unlock();
      state_->kill.request_stop();
    }
  }
  runner_.join();
}

bool ModelProcess::running() const {
  std::lock_guard lock(state_->mutex);
  return !state_->exited;
}

void ModelProcess::send(const std::string& line) {
  state_->feed->write(line + "\n");  // false once closed: the next wait reports the end
}

void ModelProcess::kill() {
  {
    std::lock_guard lock(state_->mutex);
    state_->killedHere = true;
  }
  state_->kill.request_stop();
  std::unique_lock lock(state_->mutex);
  state_->changed.wait(lock, [&] { return state_->exited; });
}

std::string ModelProcess::endedMessage() const {
  std::lock_guard lock(state_->mutex);
  const proc::ExecutionResult& r = state_->result;
  std::string message = "the model engine (" + options_.binary + ") ";
  if (r.launchFailed) return message + "could not start: " + r.launchError;
  if (state_->killedHere) {
    message += "was stopped";
  } else if (r.termSignal == SIGKILL) {
    message +=
        "was killed (SIGKILL): the system may have run out of memory for the model (the kernel's "
        "out-of-memory killer sends SIGKILL); try a smaller model or dtype";
  } else if (r.termSignal != 0) {
    message +=
        "crashed (signal " + std::to_string(r.termSignal) + ", " + ::strsignal(r.termSignal) + ")";
  } else {
    message += "exited unexpectedly (exit code " + std::to_string(r.exitCode) + ")";
  }
  if (const std::string said = lastLines(r.stderrText, 3); !said.empty()) {
    message += "; it said: " + said;
  }
  return message;
}

std::optional<LoadedModel> ModelProcess::load(const ModelLoadOptions& options,
                                              std::stop_token stop) {
  std::lock_guard request(requestMutex_);
  const std::int64_t id = ++nextId_;
  send(json{{"op", "load"},
            {"id", id},
            {"path", options.path},
            {"device", options.device},
            {"dtype", options.dtype}}
           .dump());
  const auto start = Clock::now();
  auto deadline = start + options_.silenceLimit;
  for (;;) {
    std::optional<json> event = state_->next(stop, deadline);
    if (!event) {
      if (!running()) throw GenerateError(endedMessage());
      kill();  // stopped, or silent too long: a load cannot be cancelled otherwise
      if (stop.stop_requested()) return std::nullopt;
      throw GenerateError("loading " + options.path + ": the model engine sent nothing for " +
                          std::to_string(options_.silenceLimit.count() / 1000) +
                          " s and was stopped");
    }
    deadline = Clock::now() + options_.silenceLimit;
    if (event->value("id", json()) != json(id)) continue;
    const std::string ev = event->value("ev", "");
    if (ev == "error") throw GenerateError("the model engine: " + messageOf(*event));
    if (ev != "loaded") continue;
    LoadedModel loaded;
    loaded.options = options;
    loaded.architecture = event->value("architecture", "");
    const json format = event->value("chat_format", json());
    loaded.chatFormat = format.is_string() ? format.get<std::string>() : "";
    loaded.parameters = event->value("parameters", std::int64_t{0});
    loaded.contextLength = event->value("context_length", std::int64_t{0});
    loaded.loadSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    return loaded;
  }
}

std::vector<EngineCandidate> ModelProcess::generate(
    const EngineRequest& request, std::stop_token stop,
    const std::function<void(int, const std::string&)>& onToken) {
  std::lock_guard lockRequest(requestMutex_);
  const std::int64_t id = ++nextId_;
  json messages = json::array();
  for (const ChatMessage& m : request.messages) {
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  json body = {{"op", "generate"},      {"id", id},
               {"n", request.n},        {"temperature", request.temperature},
               {"top_p", request.topP}, {"top_k", request.topK},
               {"seed", request.seed},  {"max_tokens", request.maxTokens},
               {"stop", request.stop}};
  if (request.prompt) {
    body["prompt"] = *request.prompt;
  } else {
    body["messages"] = std::move(messages);
  }
  if (request.ignoreEos) body["ignore_eos"] = true;
  send(body.dump(-1, ' ', false, json::error_handler_t::replace));

  // A cancel that reaches the engine before the generate starts is forgotten by it (the engine
  // clears its cancel flag when a generate begins): one answered with "generating": false is
  // sent again when the next token shows the generate running.
  const std::string cancelLine = json{{"op", "cancel"}}.dump();
  std::atomic<bool> cancelInFlight{false};
  bool cancelTaken = false;
  std::optional<Clock::time_point> stoppedAt;
  std::stop_callback onStop(stop, [&] {
    cancelInFlight = true;
    send(cancelLine);
  });

  std::vector<EngineCandidate> partial(static_cast<std::size_t>(std::max(request.n, 0)));
  for (std::size_t i = 0; i < partial.size(); ++i) partial[i].index = static_cast<int>(i);
  const auto cancelled = [&] {
    for (EngineCandidate& c : partial) c.finishReason = "cancelled";
    return partial;
  };

  auto deadline = Clock::now() + options_.silenceLimit;
  for (;;) {
    if (stop.stop_requested() && !stoppedAt) {
      stoppedAt = Clock::now();
      deadline = std::min(deadline, *stoppedAt + options_.cancelGrace);
    }
    // After a stop, waiting on the token would return at once: wait on time alone.
    std::optional<json> event = state_->next(stoppedAt ? std::stop_token() : stop, deadline);
    if (!event) {
      if (!running()) throw GenerateError(endedMessage());
      if (stop.stop_requested() && !stoppedAt) continue;  // woken by the stop: set its deadline
      kill();
      if (stoppedAt) return cancelled();  // it did not answer the cancel in time
      throw GenerateError("the model engine sent nothing for " +
                          std::to_string(options_.silenceLimit.count() / 1000) +
                          " s while generating and was stopped");
    }
    const std::string ev = event->value("ev", "");
    if (ev == "ok" && event->value("op", "") == "cancel") {
      cancelInFlight = false;
      cancelTaken = cancelTaken || event->value("generating", false);
      continue;
    }
    if (event->value("id", json()) != json(id)) continue;
    if (stoppedAt)
      deadline = std::min(Clock::now() + options_.silenceLimit, deadline);
    else
      deadline = Clock::now() + options_.silenceLimit;
    if (ev == "token") {
      const int index = event->value("candidate", -1);
      const std::string text = event->value("text", "");
      if (index >= 0 && index < static_cast<int>(partial.size())) {
        partial[index].text += text;
        ++partial[index].tokens;
      }
      if (!text.empty() && onToken) onToken(index, text);
      if (stop.stop_requested() && !cancelTaken && !cancelInFlight) {
        cancelInFlight = true;
        send(cancelLine);
      }
    } else if (ev == "error") {
      throw GenerateError("the model engine: " + messageOf(*event));
    } else if (ev == "done") {
      std::vector<EngineCandidate> done;
      for (const json& c : event->value("candidates", json::array())) {
        EngineCandidate candidate;
        candidate.index = c.value("candidate", 0);
        candidate.text = c.value("text", "");
        candidate.finishReason = c.value("finish_reason", "");
        candidate.tokens = static_cast<int>(c.value("tokens", json::array()).size());
        done.push_back(std::move(candidate));
      }
      return done;
    }
  }
}

EmbeddedEngine::EmbeddedEngine(ModelProcessOptions options) : options_(std::move(options)) {}

EmbeddedEngine::~EmbeddedEngine() = default;

ModelProcess* EmbeddedEngine::ready(const ModelLoadOptions& model, std::stop_token stop,
                                    const std::function<void(const std::string&)>& progress) {
  const auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  if (process_ && !process_->running()) {
    say("the model engine had stopped; starting it again");
    shutdown();
  }
  {
    std::lock_guard lock(mutex_);
    if (process_ && loaded_ && loaded_->options == model) return process_.get();
    loaded_.reset();
  }
  if (!process_) process_ = std::make_unique<ModelProcess>(options_);
  say("loading " + model.path + " on " + model.device + " (dtype " + model.dtype + ")");
  std::optional<LoadedModel> loaded = process_->load(model, stop);
  if (!loaded) {
    shutdown();  // stopped mid-load: the process was killed
    return nullptr;
  }
  char line[256];
  std::snprintf(line, sizeof line, "loaded %s, %.1fM parameters, in %.1f s",
                loaded->architecture.c_str(), static_cast<double>(loaded->parameters) / 1e6,
                loaded->loadSeconds);
  say(line);
  std::lock_guard lock(mutex_);
  loaded_ = std::move(loaded);
  return process_.get();
}

std::optional<LoadedModel> EmbeddedEngine::loaded() const {
  std::lock_guard lock(mutex_);
  return loaded_;
}

void EmbeddedEngine::shutdown() {
  {
    std::lock_guard lock(mutex_);
    loaded_.reset();
  }
  process_.reset();
}

}  // namespace crucible::generate
