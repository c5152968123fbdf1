#include "core/generate/embedded_generator.h"

#include <filesystem>
#include <random>

#include "core/generate/chat_prompt.h"
#include "core/generate/prompt_library.h"
#include "core/generate/response_parser.h"

namespace crucible::generate {

namespace {

namespace fs = std::filesystem;

/// The folder's or file's own name ("Qwen3-8B", "TritonRL-8B.Q4_K.gguf"): what the per-model
/// template rules (resources/prompts/models.json) match, not the folders above it.
std::string modelName(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

/// Candidate i of round r draws with seed + (r-1)*n + i, so that rounds do not repeat each other;
/// without a seed every request draws a fresh one.
std::uint64_t seedFor(const GenerateRequest& request) {
  if (request.seed) {
    return static_cast<std::uint64_t>(*request.seed) +
           static_cast<std::uint64_t>(request.round - 1) * static_cast<std::uint64_t>(request.n);
  }
  std::random_device entropy;
  return entropy() & 0x7fffffffU;
}

/// A model whose template is neither ChatML nor Llama-3 gets the messages as plain text.
std::string rawPrompt(const ChatPrompt& prompt) {
  std::string text;
  for (const ChatMessage& m : prompt) text += m.content + "\n\n";
  return text;
}

}  // namespace

EmbeddedGenerator::EmbeddedGenerator(ModelLoadOptions model, std::shared_ptr<EmbeddedEngine> engine,
                                     std::optional<PromptTemplate> promptTemplate)
    : model_(std::move(model)), engine_(std::move(engine)), template_(std::move(promptTemplate)) {
  if (!engine_) engine_ = std::make_shared<EmbeddedEngine>();
}

void EmbeddedGenerator::generate(const GenerateRequest& request, std::stop_token stop,
                                 const TokenCallback& onToken,
                                 const CandidateCallback& onCandidate) {
  ModelProcess* process = engine_->ready(model_, stop, [&](const std::string& line) {
    if (onToken) onToken(-1, line);
  });
  if (process == nullptr) return;  // stopped while loading
  const std::optional<LoadedModel> loaded = engine_->loaded();

  if (!template_) template_ = builtinPromptTemplate(promptTemplateNameFor(modelName(model_.path)));
  const ChatPrompt prompt = buildPrompt(*template_, request);
  EngineRequest ask;
  if (loaded && loaded->chatFormat.empty()) {
    ask.prompt = rawPrompt(prompt);
  } else {
    ask.messages = prompt;
  }
  ask.n = request.n;
  ask.temperature = request.temperature.value_or(kEmbeddedTemperature);
  ask.topP = request.topP.value_or(kEmbeddedTopP);
  ask.maxTokens = request.maxTokens.value_or(kEmbeddedMaxTokens);
  ask.stop = request.stop;
  ask.seed = seedFor(request);

  const std::vector<EngineCandidate> answers =
      process->generate(ask, stop, [&](int index, const std::string& text) {
        if (onToken) onToken(index, text);
      });
  const std::string promptString = ask.prompt ? *ask.prompt : promptText(prompt);
  for (const EngineCandidate& answer : answers) {
    if (answer.index < 0 || answer.index >= request.n) continue;
    GeneratedCandidate c;
    c.index = answer.index;
    c.origin = origin();
    c.model = modelId();
    c.prompt = promptString;
    c.rawResponse = answer.text;
    parseResponse(c, answer.finishReason);
    if (!c.error.empty() && answer.finishReason == "cancelled") c.error += " (generation stopped)";
    onCandidate(std::move(c));
  }
}

}  // namespace crucible::generate
