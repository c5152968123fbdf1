#pragma once
// From what the user typed after --model to a Generator: "synth" (the built-in synthesizer), an
// http(s) URL (an OpenAI-compatible endpoint), or a weights folder / .gguf file (the embedded
// engine). The one place the CLI and the GUI turn a model choice into a generator.

#include <memory>
#include <string>

#include "core/generate/generator.h"

namespace crucible::generate {

class EmbeddedEngine;  // model_process.h

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
  // The embedded model: where it runs and in which dtype ("" = the engine's default: cpu, auto),
  // and an engine to reuse (the GUI keeps one so that the model stays loaded; null = a new one).
  std::string device = {};
  std::string dtype = {};
  std::shared_ptr<EmbeddedEngine> engine = {};
};

/// Makes the generator. Throws BadInput for a bad choice or template file (naming the file and
/// line) or a device/dtype for a model that is not embedded, GeneratorUnavailable for a kind this
/// build does not have (no crucible-model next to the executable).
std::unique_ptr<Generator> makeGenerator(const GeneratorOptions& options);

}  // namespace crucible::generate
