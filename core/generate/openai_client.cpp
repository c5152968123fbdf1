#include "core/generate/openai_client.h"

#include <cstdlib>
#include <map>

#include "core/generate/http_client.h"
#include "core/generate/sse.h"

namespace crucible::generate {

namespace {

using nlohmann::json;

constexpr std::size_t kPlainBodyCap = 32 << 20;

std::string trimmedUrl(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::vector<std::string> headersFor(const EndpointConfig& config) {
  std::vector<std::string> headers = {"Content-Type: application/json",
                                      "Accept: text/event-stream, application/json"};
  if (!config.apiKey.empty()) headers.push_back("Authorization: Bearer " + config.apiKey);
  return headers;
}

/// Accumulates the choices of one streamed completion.
class ChoiceAssembler {
 public:
  ChoiceAssembler(const std::string& url,
                  const std::function<void(int, const std::string&)>& onDelta,
                  const std::function<void(const ChatChoice&)>& onChoice)
      : url_(url), onDelta_(onDelta), onChoice_(onChoice) {}

  /// One server-sent event's data.
  void event(const std::string& data) {
    if (data == "[DONE]") {
      done_ = true;
      return;
    }
    const json chunk = json::parse(data, nullptr, false);
    if (chunk.is_discarded() || !chunk.is_object()) {
      throw GenerateError(url_ + " sent a stream event that is not JSON: " + data.substr(0, 200));
    }
    if (chunk.contains("error")) {  // vLLM and others report failures inside the stream
      const json& e = chunk["error"];
      throw GenerateError(url_ + " reported an error while streaming: " +
                          (e.is_object() ? e.value("message", e.dump()) : e.dump()));
    }
    for (const json& c : chunk.value("choices", json::array())) {
      if (!c.is_object()) continue;
      const int index = c.value("index", 0);
      const json delta = c.contains("delta") ? c["delta"] : c.value("message", json::object());
      Partial& p = partial(index);
      if (p.finished) continue;
      for (const char* field : {"reasoning_content", "reasoning"}) {
        if (delta.contains(field) && delta[field].is_string()) {
          p.reasoning += delta[field].get<std::string>();
          if (onDelta_) onDelta_(index, delta[field].get<std::string>());
        }
      }
      if (delta.contains("content") && delta["content"].is_string()) {
        p.text += delta["content"].get<std::string>();
        if (onDelta_) onDelta_(index, delta["content"].get<std::string>());
      }
      if (c.contains("finish_reason") && c["finish_reason"].is_string()) {
        finish(index, c["finish_reason"].get<std::string>());
      }
    }
  }

  /// The stream ended: choices the server never finished are handed over as they are.
  std::vector<ChatChoice> close() {
    for (auto& [index, p] : partials_) {
      if (!p.finished) finish(index, "");
    }
    return std::move(finished_);
  }

  bool sawDone() const { return done_; }

 private:
  struct Partial {
    std::string reasoning, text;
    bool finished = false;
  };

  Partial& partial(int index) {
    if (index < 0 || index > 4096) {
      throw GenerateError(url_ + " sent a choice with index " + std::to_string(index));
    }
    return partials_[index];
  }

  void finish(int index, const std::string& reason) {
    Partial& p = partials_[index];
    p.finished = true;
    ChatChoice choice{index, p.text, reason};
    if (!p.reasoning.empty()) choice.text = "<think>\n" + p.reasoning + "\n</think>\n" + p.text;
    if (onChoice_) onChoice_(choice);
    finished_.push_back(std::move(choice));
  }

  const std::string& url_;
  const std::function<void(int, const std::string&)>& onDelta_;
  const std::function<void(const ChatChoice&)>& onChoice_;
  std::map<int, Partial> partials_;
  std::vector<ChatChoice> finished_;
  bool done_ = false;
};

}  // namespace

std::string apiKeyFromEnvironment() {
  for (const char* name : {"CRUCIBLE_API_KEY", "OPENAI_API_KEY"}) {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
    if (value != nullptr && value[0] != '\0') return value;
  }
  return {};
}

std::string chatCompletionsUrl(const std::string& baseUrl) {
  const std::string url = trimmedUrl(baseUrl);
  if (url.ends_with("/chat/completions")) return url;
  return url + "/chat/completions";
}

json chatRequestBody(const std::string& model, const ChatRequest& request) {
  json messages = json::array();
  for (const ChatMessage& m : request.messages) {
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  json body = {{"model", model}, {"messages", messages}, {"n", request.n}, {"stream", true}};
  if (request.temperature) body["temperature"] = *request.temperature;
  if (request.topP) body["top_p"] = *request.topP;
  if (request.maxTokens) body["max_tokens"] = *request.maxTokens;
  if (!request.stop.empty()) body["stop"] = request.stop;
  if (request.seed) body["seed"] = *request.seed;
  return body;
}

const std::string& OpenAIClient::model(std::stop_token stop) {
  if (!config_.model.empty()) return config_.model;
  HttpRequest request;
  request.method = "GET";
  request.url = trimmedUrl(config_.baseUrl);
  if (request.url.ends_with("/chat/completions")) {
    request.url.resize(request.url.size() - std::string_view("/chat/completions").size());
  }
  request.url += "/models";
  request.headers = headersFor(config_);
  std::string body;
  httpSend(
      request, [&](std::string_view bytes) { body.append(bytes); }, stop);
  const json listing = json::parse(body, nullptr, false);
  if (listing.is_object() && listing.contains("data") && listing["data"].is_array() &&
      !listing["data"].empty() && listing["data"][0].is_object() &&
      listing["data"][0].contains("id") && listing["data"][0]["id"].is_string()) {
    config_.model = listing["data"][0]["id"].get<std::string>();
    return config_.model;
  }
  throw GenerateError(request.url + " lists no model; name one with --endpoint-model");
}

std::vector<ChatChoice> OpenAIClient::complete(
    const ChatRequest& request, std::stop_token stop,
    const std::function<void(int, const std::string&)>& onDelta,
    const std::function<void(const ChatChoice&)>& onChoice) {
  HttpRequest http;
  http.url = chatCompletionsUrl(config_.baseUrl);
  http.headers = headersFor(config_);
  http.body =
      chatRequestBody(model(stop), request).dump(-1, ' ', false, json::error_handler_t::replace);
  ChoiceAssembler assembler(http.url, onDelta, onChoice);
  SseReader reader([&](const std::string& data) { assembler.event(data); });
  std::string plain;  // the body as it came, for servers that answer without streaming
  const bool complete = httpSend(
      http,
      [&](std::string_view bytes) {
        if (plain.size() < kPlainBodyCap) plain.append(bytes);
        reader.feed(bytes);
      },
      stop);
  if (!complete) return assembler.close();  // stopped: keep what finished
  reader.finish();
  if (reader.events() == 0) {
    // Not a stream: one JSON completion ({"choices": [{"message": ...}]}) is accepted as well.
    const json whole = json::parse(plain, nullptr, false);
    if (whole.is_discarded() || !whole.is_object()) {
      throw GenerateError(http.url +
                          " answered with neither a stream nor JSON: " + plain.substr(0, 200));
    }
    assembler.event(plain);
  }
  return assembler.close();
}

}  // namespace crucible::generate
