#include "core/llm/generator.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "core/llm/candidate_text.h"
#include "core/llm/model_error.h"

namespace crucible::llm {
namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One candidate while it decodes.
struct Live {
  int candidate;
  Sampler sampler;
  CandidateText text;
  int next = -1;
};
}  // namespace

void from_json(const nlohmann::json& j, GenerateRequest& r) {
  try {
    if (j.contains("prompt")) r.prompt = j.at("prompt").get<std::string>();
    if (j.contains("messages")) r.messages = j.at("messages").get<std::vector<ChatMessage>>();
    if (!r.prompt && r.messages.empty())
      throw ModelError("generate needs \"messages\" or \"prompt\"");
    r.n = j.value("n", 1);
    r.sampling = j.get<SamplingParams>();
    r.maxTokens = j.value("max_tokens", 256);
    const auto stop = j.value("stop", nlohmann::json::array());
    r.stop = stop.is_string() ? std::vector<std::string>{stop.get<std::string>()}
                              : stop.get<std::vector<std::string>>();
    r.enableThinking = j.value("enable_thinking", true);
    r.ignoreEos = j.value("ignore_eos", false);
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(std::string("generate: ") + e.what());
  }
  if (r.n < 1 || r.n > 256) throw ModelError("generate: n must be between 1 and 256");
  if (r.maxTokens < 1) throw ModelError("generate: max_tokens must be at least 1");
  if (r.sampling.temperature < 0 || r.sampling.topK < 0 || r.sampling.topP <= 0 ||
      r.sampling.topP > 1)
    throw ModelError("generate: need temperature >= 0, top_k >= 0, 0 < top_p <= 1");
}

void to_json(nlohmann::json& j, const CandidateResult& c) {
  j = {{"candidate", c.candidate},
       {"text", c.text},
       {"tokens", c.tokens},
       {"finish_reason", c.finishReason}};
}

void to_json(nlohmann::json& j, const GenerateResult& r) {
  j = {{"candidates", r.candidates},
       {"usage", {{"prompt_tokens", r.promptTokens}, {"generated_tokens", r.generatedTokens}}},
       {"timing", {{"prefill_s", r.prefillSeconds}, {"decode_s", r.decodeSeconds}}}};
}

std::vector<int> promptIds(const ModelFolder& folder, const GenerateRequest& request) {
  if (request.prompt) return folder.tokenizer.encode(*request.prompt, true);
  if (!folder.chatTemplate)
    throw ModelError(folder.chatTemplateText.empty()
                         ? "the model has no chat template: send a raw \"prompt\""
                         : "the model's chat template is neither ChatML nor Llama-3: send a raw "
                           "\"prompt\"");
  // The rendered text carries its own BOS, as apply_chat_template(tokenize=True) does.
  return folder.tokenizer.encode(
      folder.chatTemplate->render(request.messages, true, request.enableThinking), false);
}

GenerateResult generate(Decoder& decoder, const ModelFolder& folder, const GenerateRequest& request,
                        const std::atomic<bool>& cancel, const TokenSink& sink) {
  GenerateResult result;
  const std::vector<int> ids = promptIds(folder, request);
  if (ids.empty()) throw ModelError("the prompt encodes to no tokens");
  const auto context = folder.config.maxPositions;
  if (static_cast<std::int64_t>(ids.size()) >= context)
    throw ModelError("the prompt has " + std::to_string(ids.size()) +
                     " tokens; the context length is " + std::to_string(context));
  result.promptTokens = static_cast<int>(ids.size());
  result.candidates.resize(request.n);

  const auto prefillStart = Clock::now();
  std::vector<float> logits = decoder.prefill(ids, request.n);
  result.prefillSeconds = secondsSince(prefillStart);
  const auto vocab = static_cast<std::size_t>(decoder.vocabSize());

  std::vector<Live> live;
  for (int i = 0; i < request.n; ++i) {
    live.push_back(
        {i, Sampler(request.sampling, request.sampling.seed + i), CandidateText(request.stop)});
    live.back().next = live.back().sampler.sample(logits);  // every row starts from one prefill
    result.candidates[i].candidate = i;
  }
  const auto decodeStart = Clock::now();
  std::int64_t position = static_cast<std::int64_t>(ids.size());
  while (!live.empty()) {
    std::vector<int> keep, feed;
    std::vector<Live> still;
    for (std::size_t row = 0; row < live.size(); ++row) {
      Live& c = live[row];
      CandidateResult& out = result.candidates[c.candidate];
      out.tokens.push_back(c.next);
      ++result.generatedTokens;
      std::string finish;
      if (!request.ignoreEos && folder.stopIds.count(c.next)) {
        finish = "stop";
        sink(c.candidate, c.next, "");
      } else {
        const std::string bytes = folder.tokenizer.isSpecial(c.next)
                                      ? std::string()
                                      : folder.tokenizer.tokenBytes(c.next);
        sink(c.candidate, c.next, c.text.append(bytes));
        if (c.text.stopped())
          finish = "stop";
        else if (static_cast<int>(out.tokens.size()) >= request.maxTokens ||
                 position + 1 >= context)
          finish = "length";
        else if (cancel.load())
          finish = "cancelled";
      }
      if (finish.empty()) {
        keep.push_back(static_cast<int>(row));
        feed.push_back(c.next);
        still.push_back(std::move(c));
        continue;
      }
      if (const std::string rest = c.text.flush(); !rest.empty()) sink(c.candidate, -1, rest);
      out.text = c.text.text();
      out.finishReason = finish;
    }
    const bool dropped = still.size() != live.size();
    live = std::move(still);
    if (live.empty()) break;
    if (dropped) decoder.keepRows(keep);
    logits = decoder.step(feed);
    ++position;
    for (std::size_t row = 0; row < live.size(); ++row)
      live[row].next =
          live[row].sampler.sample(std::span<const float>(logits.data() + row * vocab, vocab));
  }
  result.decodeSeconds = secondsSince(decodeStart);
  return result;
}

}  // namespace crucible::llm
