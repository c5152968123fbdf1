#pragma once
// From what the user typed after --model to a Generator: "synth" (the built-in synthesizer), an
// http(s) URL (an OpenAI-compatible endpoint), or a weights folder / .gguf file (the embedded
// engine). The one place the CLI and the GUI turn a model choice into a generator.

#include <memory>
#include <string>

#include "core/generate/generator.h"

namespace crucible::generate {

enum class ModelKind { Synth, Endpoint, Embedded };

struct ModelChoice {
  ModelKind kind = ModelKind::Synth;
  std::string value;  // the URL or the path, as given
};

/// A generator that this build cannot offer (yet); the CLI exits with 2 and prints what().
class GeneratorUnavailable : public GenerateError {
  using GenerateError::GenerateError;
};

/// Classifies `text`; throws BadInput (core/verify/verifier.h) for anything else.
ModelChoice classifyModel(const std::string& text);

struct GeneratorOptions {
  std::string model = "synth";  // --model
  std::string endpointModel;    // --endpoint-model: the served model's name; "" asks the server
  std::string promptFile;       // --prompt: a template file instead of the built-in choice
  bool needsFindings = false;   // refinement: the template must use {{findings}}
};

/// Makes the generator. Throws BadInput for a bad choice or template file (naming the file and
/// line), GeneratorUnavailable for a kind this build does not have.
std::unique_ptr<Generator> makeGenerator(const GeneratorOptions& options);

}  // namespace crucible::generate
