#include "core/llm/protocol_server.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <istream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <thread>

#include "core/llm/generator.h"
#include "core/llm/model_error.h"

namespace crucible::llm {
namespace {
using nlohmann::json;

class Server {
 public:
  Server(std::ostream& out, const DecoderFactory& factory) : out_(out), factory_(factory) {}

  int run(std::istream& in) {
    std::jthread reader([&] { readLoop(in); });
    for (;;) {
      std::optional<json> request = next();
      if (!request) break;
      if (request->value("op", "") == "quit") break;
      handle(*request);
    }
    stopReading_ = true;
    reader.detach();  // blocked in getline; the process is about to exit
    return 0;
  }

 private:
  void emit(json event, const json& id) {
    if (!id.is_null()) event["id"] = id;
    std::lock_guard lock(outMutex_);
    out_ << event.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
  }
  void error(const json& id, const std::string& message) {
    emit({{"ev", "error"}, {"message", message}}, id);
  }

  // Reads requests; cancel is answered here so it is never queued behind a generate.
  void readLoop(std::istream& in) {
    std::string line;
    for (int lineNo = 1; !stopReading_ && std::getline(in, line); ++lineNo) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json request;
      try {
        request = json::parse(line);
        if (!request.is_object()) throw ModelError("a request is a JSON object");
        if (!request.contains("op") || !request["op"].is_string())
          throw ModelError("a request needs a string \"op\"");
      } catch (const std::exception& e) {
        error(nullptr, "stdin line " + std::to_string(lineNo) + ": " + e.what());
        continue;
      }
      if (request["op"] == "cancel") {
        cancel_ = true;
        emit({{"ev", "ok"}, {"op", "cancel"}, {"generating", generating_.load()}},
             request.value("id", json()));
        continue;
      }
      push(std::move(request));
    }
    cancel_ = true;  // end of input: stop what runs and leave
    push(std::nullopt);
  }

  void push(std::optional<json> request) {
    std::lock_guard lock(queueMutex_);
    queue_.push_back(std::move(request));
    queueReady_.notify_one();
  }
  std::optional<json> next() {
    std::unique_lock lock(queueMutex_);
    queueReady_.wait(lock, [&] { return !queue_.empty(); });
    auto request = std::move(queue_.front());
    queue_.pop_front();
    return request;
  }

  void handle(const json& request) {
    const json id = request.value("id", json());
    const std::string op = request["op"];
    try {
      if (op == "load") return load(request, id);
      if (op == "unload") {
        decoder_.reset();
        folder_.reset();
        return emit({{"ev", "unloaded"}}, id);
      }
      static const std::set<std::string> kModelOps = {"info", "generate", "tokenize", "render",
                                                      "logits"};
      if (!kModelOps.count(op)) throw ModelError("unknown op '" + op + "'");
      if (!folder_) throw ModelError("no model loaded: send {\"op\":\"load\",\"path\":...} first");
      if (op == "info") return emit(info("info"), id);
      if (op == "generate") return generateOp(request, id);
      if (op == "tokenize") return tokenize(request, id);
      if (op == "render") return render(request, id);
      return logits(request, id);
    } catch (const std::exception& e) {
      error(id, op + ": " + e.what());
    }
  }

  void load(const json& request, const json& id) {
    if (!request.contains("path") || !request["path"].is_string())
      throw ModelError("load needs a string \"path\"");
    decoder_.reset();
    folder_.reset();
    auto folder =
        std::make_unique<ModelFolder>(ModelFolder::open(request["path"].get<std::string>()));
    decoder_ = factory_(*folder, request.value("device", "cpu"), request.value("dtype", "auto"));
    folder_ = std::move(folder);
    emit(info("loaded"), id);
  }

  json info(const std::string& ev) const {
    json format = nullptr;
    if (folder_->chatTemplate) format = std::string(folder_->chatTemplate->formatName());
    return {{"ev", ev},
            {"path", folder_->path.string()},
            {"format", folder_->format},
            {"architecture", folder_->config.architecture},
            {"parameters", folder_->config.parameterCount()},
            {"context_length", folder_->config.maxPositions},
            {"vocab_size", folder_->tokenizer.vocabSize()},
            {"config", folder_->config},
            {"chat_format", format},
            {"chat_template", folder_->chatTemplateText},
            {"stop_ids", folder_->stopIds},
            {"decoder", decoder_->describe()}};
  }

  void generateOp(const json& request, const json& id) {
    const auto req = request.get<GenerateRequest>();
    cancel_ = false;
    generating_ = true;
    struct Done {
      std::atomic<bool>& flag;
      ~Done() { flag = false; }
    } done{generating_};
    const GenerateResult result = generate(
        *decoder_, *folder_, req, cancel_, [&](int candidate, int token, const std::string& delta) {
          json event = {{"ev", "token"}, {"candidate", candidate}, {"text", delta}};
          event["token"] = token >= 0 ? json(token) : json(nullptr);
          emit(std::move(event), id);
        });
    json event = result;
    event["ev"] = "done";
    emit(std::move(event), id);
  }

  void tokenize(const json& request, const json& id) {
    const auto text = request.at("text").get<std::string>();
    const auto ids = folder_->tokenizer.encode(text, request.value("add_special_tokens", true));
    emit({{"ev", "tokens"}, {"ids", ids}}, id);
  }

  void render(const json& request, const json& id) {
    GenerateRequest req = request.get<GenerateRequest>();
    std::string text = req.prompt ? *req.prompt : std::string();
    if (!req.prompt && folder_->chatTemplate)
      text = folder_->chatTemplate->render(req.messages, true, req.enableThinking);
    emit({{"ev", "rendered"}, {"text", text}, {"ids", promptIds(*folder_, req)}}, id);
  }

  void logits(const json& request, const json& id) {
    const auto ids = request.at("ids").get<std::vector<int>>();
    for (int t : ids)
      if (t < 0 || t >= decoder_->vocabSize())
        throw ModelError("token id " + std::to_string(t) + " outside the vocabulary");
    if (ids.empty()) throw ModelError("logits needs at least one id");
    emit({{"ev", "logits"}, {"logits", decoder_->logits(ids)}}, id);
  }

  std::ostream& out_;
  const DecoderFactory& factory_;
  std::mutex outMutex_, queueMutex_;
  std::condition_variable queueReady_;
  std::deque<std::optional<json>> queue_;
  std::atomic<bool> cancel_{false}, generating_{false}, stopReading_{false};
  std::unique_ptr<ModelFolder> folder_;
  std::unique_ptr<Decoder> decoder_;
};
}  // namespace

int serveProtocol(std::istream& in, std::ostream& out, const DecoderFactory& factory) {
  Server server(out, factory);
  return server.run(in);
}

}  // namespace crucible::llm
