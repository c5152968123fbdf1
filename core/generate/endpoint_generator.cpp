#include "core/generate/endpoint_generator.h"

#include "core/generate/prompt_library.h"
#include "core/generate/response_parser.h"

namespace crucible::generate {

EndpointGenerator::EndpointGenerator(EndpointConfig config,
                                     std::optional<PromptTemplate> promptTemplate)
    : client_(std::move(config)), template_(std::move(promptTemplate)) {}

std::string EndpointGenerator::modelId() const {
  return client_.model();
}

void EndpointGenerator::generate(const GenerateRequest& request, std::stop_token stop,
                                 const TokenCallback& onToken,
                                 const CandidateCallback& onCandidate) {
  const std::string model = client_.model(stop);
  if (!template_) template_ = builtinPromptTemplate(promptTemplateNameFor(model));
  const ChatPrompt prompt = buildPrompt(*template_, request);
  const std::string promptString = promptText(prompt);

  ChatRequest chat;
  chat.messages = prompt;
  chat.temperature = request.temperature;
  chat.topP = request.topP;
  chat.maxTokens = request.maxTokens;
  chat.stop = request.stop;
  chat.seed = request.seed;

  // Servers that ignore n (llama.cpp's, Ollama's) answer with one choice: ask again for the rest,
  // with the next seed so that a seeded run does not repeat itself.
  int produced = 0;
  for (int attempt = 0; produced < request.n && !stop.stop_requested(); ++attempt) {
    chat.n = request.n - produced;
    if (request.seed) chat.seed = *request.seed + attempt;
    const int offset = produced;
    const auto choices = client_.complete(
        chat, stop,
        [&](int index, const std::string& text) {
          if (onToken) onToken(offset + index, text);
        },
        [&](const ChatChoice& choice) {
          if (offset + choice.index >= request.n) return;  // more than asked for
          GeneratedCandidate c;
          c.index = offset + choice.index;
          c.origin = origin();
          c.model = model;
          c.prompt = promptString;
          c.rawResponse = choice.text;
          parseResponse(c, choice.finishReason);
          ++produced;
          onCandidate(std::move(c));
        });
    if (produced == offset && !stop.stop_requested()) {
      throw GenerateError(chatCompletionsUrl(client_.config().baseUrl) + " answered with " +
                          std::to_string(choices.size()) + " choices but none of those asked for");
    }
  }
}

}  // namespace crucible::generate
