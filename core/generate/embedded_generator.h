#pragma once
// The embedded model (crucible-model) as a Generator: the engine loads the weights once
// (model_process.h keeps it between generations), the prompt is the built-in template for the
// model (or the user's), the n candidates decode as one batch with their tokens streamed, and
// each answer is parsed into a candidate. A stop request becomes the protocol's cancel.

#include <memory>
#include <optional>

#include "core/generate/generator.h"
#include "core/generate/model_process.h"
#include "core/generate/prompt_template.h"

namespace crucible::generate {

/// Sampling defaults when the request leaves them unset: n greedy samples would all be the same.
inline constexpr double kEmbeddedTemperature = 0.7;
inline constexpr double kEmbeddedTopP = 0.95;
inline constexpr int kEmbeddedMaxTokens = 2048;

class EmbeddedGenerator : public Generator {
 public:
  /// `engine` may be shared with later generators (the model stays loaded); without a template
  /// the built-in one for the model's file or folder name is used (prompt_library.h).
  EmbeddedGenerator(ModelLoadOptions model, std::shared_ptr<EmbeddedEngine> engine,
                    std::optional<PromptTemplate> promptTemplate);

  std::string origin() const override { return "embedded"; }
  /// The model's path, absolute.
  std::string modelId() const override { return model_.path; }
  /// Loads the model when needed (progress lines through onToken(-1, ...)), then generates.
  /// Throws GenerateError when the engine is missing, cannot load the model, fails or ends.
  void generate(const GenerateRequest& request, std::stop_token stop, const TokenCallback& onToken,
                const CandidateCallback& onCandidate) override;

 private:
  ModelLoadOptions model_;
  std::shared_ptr<EmbeddedEngine> engine_;
  std::optional<PromptTemplate> template_;
};

}  // namespace crucible::generate
