#pragma once
// A client for OpenAI-compatible chat completions (vLLM, SGLang, llama.cpp server, Ollama):
// streaming over server-sent events, n samples, the sampling parameters, an API key. Each choice
// is handed over as soon as the server finishes it.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/generate/chat_prompt.h"

namespace crucible::generate {

struct EndpointConfig {
  std::string baseUrl;  // "http://localhost:8000/v1"
  std::string model;    // the served model's name; "" asks the server (/models)
  std::string apiKey;   // sent as a bearer token when not empty
};

struct ChatRequest {
  ChatPrompt messages;
  int n = 1;
  std::optional<double> temperature = std::nullopt;
  std::optional<double> topP = std::nullopt;
  std::optional<int> maxTokens = std::nullopt;
  std::vector<std::string> stop = {};
  std::optional<std::int64_t> seed = std::nullopt;
};

struct ChatChoice {
  int index = 0;
  std::string text;          // the answer; reasoning the server sent apart comes first, in <think>
  std::string finishReason;  // "stop", "length", ...; "" when the stream just ended
};

/// The API key from the environment: $CRUCIBLE_API_KEY, else $OPENAI_API_KEY, else "".
std::string apiKeyFromEnvironment();

/// ".../v1" -> ".../v1/chat/completions"; a URL that already names the route is kept.
std::string chatCompletionsUrl(const std::string& baseUrl);

/// The JSON body of a streaming chat-completions request.
nlohmann::json chatRequestBody(const std::string& model, const ChatRequest& request);

class OpenAIClient {
 public:
  explicit OpenAIClient(EndpointConfig config) : config_(std::move(config)) {}

  /// The model this client asks for: the configured one, else the first the server lists at
  /// /models. Throws GenerateError when there is none.
  const std::string& model(std::stop_token stop = {});

  /// Streams one request. onDelta(index, text) for each piece of text; onChoice for each choice
  /// when it finishes (in the order they finish). Returns every choice. Throws GenerateError
  /// (HttpError for transport and HTTP failures) with a message for the user; a stop request
  /// returns what finished so far.
  std::vector<ChatChoice> complete(const ChatRequest& request, std::stop_token stop,
                                   const std::function<void(int, const std::string&)>& onDelta,
                                   const std::function<void(const ChatChoice&)>& onChoice);

  const EndpointConfig& config() const { return config_; }

 private:
  EndpointConfig config_;
};

}  // namespace crucible::generate
