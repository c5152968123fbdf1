#pragma once
// The Generator for an OpenAI-compatible endpoint: renders the prompt template, streams n
// samples, and parses each answer into a candidate as soon as it finishes.

#include <optional>

#include "core/generate/generator.h"
#include "core/generate/openai_client.h"
#include "core/generate/prompt_template.h"

namespace crucible::generate {

class EndpointGenerator : public Generator {
 public:
  /// Without a template, the built-in one for the model (prompt_library.h) is used.
  EndpointGenerator(EndpointConfig config, std::optional<PromptTemplate> promptTemplate);

  std::string origin() const override { return "endpoint"; }
  /// The configured model name, or the one the server lists (asked once).
  std::string modelId() const override;
  void generate(const GenerateRequest& request, std::stop_token stop, const TokenCallback& onToken,
                const CandidateCallback& onCandidate) override;

 private:
  mutable OpenAIClient client_;
  std::optional<PromptTemplate> template_;
};

}  // namespace crucible::generate
