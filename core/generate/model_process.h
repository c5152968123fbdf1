#pragma once
// A client for crucible-model, the embedded LLM engine (docs/MODEL_PROTOCOL.md). The engine runs
// as a long-lived child through core/proc: its own process group, killed whole on shutdown, on a
// hang or when a load is stopped; its stderr drained. Requests go in as JSON lines and events come
// back as they are written. A crash or an out-of-memory of the child becomes a GenerateError with
// what is known about it; this side never goes down with it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/generate/chat_prompt.h"
#include "core/generate/generator.h"

namespace crucible::generate {

struct ModelLoadOptions {
  std::string path;            // a Hugging Face folder or a .gguf file, passed on as it is
  std::string device = "cpu";  // cpu | cuda | cuda:N
  std::string dtype = "auto";  // auto | float32 | float16 | bfloat16 | int8 | int4
  bool operator==(const ModelLoadOptions&) const = default;
};

/// What the engine's `loaded` event says about the model.
struct LoadedModel {
  ModelLoadOptions options;  // what was asked for
  std::string architecture;  // "Qwen3ForCausalLM", ...
  std::string chatFormat;    // chatml | llama3; "" when the template is neither (raw prompts only)
  std::int64_t parameters = 0;
  std::int64_t contextLength = 0;
  double loadSeconds = 0;
};

/// One generate request in the protocol's terms.
struct EngineRequest {
  ChatPrompt messages;                // rendered with the model's chat template
  std::optional<std::string> prompt;  // raw text instead of messages
  int n = 1;
  double temperature = 0;
  double topP = 1;
  int topK = 0;
  std::uint64_t seed = 0;
  int maxTokens = 256;
  std::vector<std::string> stop;
  bool ignoreEos = false;
};

struct EngineCandidate {
  int index = 0;
  std::string text;          // the whole answer; what there was when cancelled
  std::string finishReason;  // stop | length | cancelled
  int tokens = 0;
};

struct ModelProcessOptions {
  std::string binary;  // "" = locateModelEngine() (core/util/locations.h)
  // A request that hears nothing from the engine for this long is taken for a hang: the process
  // is killed and the request fails.
  std::chrono::milliseconds silenceLimit{std::chrono::minutes(15)};
  // After a cancel, how long the engine has to send `done` before it is killed (a prefill is not
  // a token step: a long prompt on a big model can keep it from answering for a while).
  std::chrono::milliseconds cancelGrace{std::chrono::seconds(10)};
};

class ModelProcess {
 public:
  /// Starts the engine. Throws GenerateError when there is no binary to start.
  explicit ModelProcess(ModelProcessOptions options = {});
  /// Asks the engine to quit; kills its process group when it does not within a few seconds.
  ~ModelProcess();
  ModelProcess(const ModelProcess&) = delete;
  ModelProcess& operator=(const ModelProcess&) = delete;

  /// False once the process has ended (crashed, killed, quit).
  bool running() const;

  /// Loads a model, replacing the one loaded. The protocol cannot cancel a load, so a stop request
  /// kills the process and gives nullopt. Throws GenerateError (the engine's message, which names
  /// the file) when the model cannot be loaded or the process ends.
  std::optional<LoadedModel> load(const ModelLoadOptions& options, std::stop_token stop);

  /// Generates, calling onToken(candidate, text) for every streamed piece of text. A stop request
  /// is sent as the protocol's cancel; the candidates then come back with the text they had
  /// (finish_reason "cancelled"), also when the engine had to be killed for not answering.
  /// Throws GenerateError for the engine's error event or when the process ends.
  std::vector<EngineCandidate> generate(
      const EngineRequest& request, std::stop_token stop,
      const std::function<void(int, const std::string&)>& onToken);

 private:
  struct State;
  void send(const std::string& line);
  void kill();
  std::string endedMessage() const;

  ModelProcessOptions options_;
  std::shared_ptr<State> state_;
  std::thread runner_;
  std::mutex requestMutex_;  // one request at a time
  std::int64_t nextId_ = 0;
};

/// The engine a generator drives, kept between generations: the process starts on first use and
/// again after a crash, and a model is loaded only when another one (or another device or dtype)
/// is asked for. The GUI keeps one for its lifetime (the model stays loaded); the CLI one per run.
class EmbeddedEngine {
 public:
  explicit EmbeddedEngine(ModelProcessOptions options = {});
  ~EmbeddedEngine();

  /// The process with `model` loaded; nullptr when stopped. `progress` gets a line when a process
  /// starts or a model loads. Throws GenerateError.
  ModelProcess* ready(const ModelLoadOptions& model, std::stop_token stop,
                      const std::function<void(const std::string&)>& progress = {});
  /// The model loaded now, if any (any thread).
  std::optional<LoadedModel> loaded() const;
  /// Ends the process (the next ready() starts another).
  void shutdown();

 private:
  ModelProcessOptions options_;
  mutable std::mutex mutex_;  // guards loaded_ for readers on other threads
  std::unique_ptr<ModelProcess> process_;
  std::optional<LoadedModel> loaded_;
};

}  // namespace crucible::generate
