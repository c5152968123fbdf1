// One generate request end to end above the forward pass: the prompt (chat messages through the
// model's template, or a raw prompt), one shared prefill, n candidates decoded as one batch, each
// with its own sampler (seed + i), stop ids and stop strings, streaming deltas, cancel between
// token steps (finished candidates keep their partial text).
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/llm/chat_template.h"
#include "core/llm/decoder.h"
#include "core/llm/model_folder.h"
#include "core/llm/sampler.h"

namespace crucible::llm {

struct GenerateRequest {
  std::vector<ChatMessage> messages;  // used when prompt is absent
  std::optional<std::string> prompt;  // raw text, encoded with the post-processor's BOS
  int n = 1;
  SamplingParams sampling;
  int maxTokens = 256;
  std::vector<std::string> stop;
  bool enableThinking = true;  // Qwen3 templates only
  bool ignoreEos = false;      // decode past the model's stop ids (benchmarks, tests)
};
// Throws ModelError with a message that names the bad field.
void from_json(const nlohmann::json& j, GenerateRequest& r);

struct CandidateResult {
  int candidate = 0;
  std::string text;
  std::vector<int> tokens;
  std::string finishReason;  // stop, length, cancelled
};
void to_json(nlohmann::json& j, const CandidateResult& c);

struct GenerateResult {
  std::vector<CandidateResult> candidates;
  int promptTokens = 0;
  int generatedTokens = 0;
  double prefillSeconds = 0;
  double decodeSeconds = 0;
};
void to_json(nlohmann::json& j, const GenerateResult& r);

// token < 0: text released at the end without a new token (held-back bytes).
using TokenSink = std::function<void(int candidate, int token, const std::string& delta)>;

std::vector<int> promptIds(const ModelFolder& folder, const GenerateRequest& request);
GenerateResult generate(Decoder& decoder, const ModelFolder& folder, const GenerateRequest& request,
                        const std::atomic<bool>& cancel, const TokenSink& sink);

}  // namespace crucible::llm
