#include "core/generate/generator_factory.h"

#include <filesystem>
#include <optional>

#include "core/generate/endpoint_generator.h"
#include "core/generate/prompt_library.h"
#include "core/generate/synth_generator.h"
#include "core/verify/verifier.h"

namespace crucible::generate {

ModelChoice classifyModel(const std::string& text) {
  if (text == "synth") return {ModelKind::Synth, text};
  if (text.starts_with("http://") || text.starts_with("https://")) {
    return {ModelKind::Endpoint, text};
  }
  std::error_code ec;
  const std::filesystem::path path(text);
  if (std::filesystem::is_directory(path, ec) ||
      (path.extension() == ".gguf" && std::filesystem::is_regular_file(path, ec))) {
    return {ModelKind::Embedded, text};
  }
  if (path.extension() == ".gguf" || text.find('/') != std::string::npos) {
    throw BadInput("--model " + text + ": no such model folder or .gguf file");
  }
  throw BadInput("--model " + text +
                 ": expected synth, an endpoint URL (http://host:port/v1) or a model folder or "
                 ".gguf file");
}

std::unique_ptr<Generator> makeGenerator(const GeneratorOptions& options) {
  const ModelChoice choice = classifyModel(options.model);
  std::optional<PromptTemplate> promptTemplate;
  if (!options.promptFile.empty()) {
    try {
      promptTemplate = loadPromptTemplate(options.promptFile);
    } catch (const TemplateError& e) {
      throw BadInput(e.what());
    }
    if (options.needsFindings && !promptTemplate->uses("findings")) {
      throw BadInput(options.promptFile +
                     ": --search refine needs a template that uses {{findings}} (the verifier's "
                     "findings on the previous candidate)");
    }
  }
  switch (choice.kind) {
    case ModelKind::Synth:
      // The synthesizer is deterministic and reads no findings: a refinement round would
      // offer the same kernels again.
      if (options.needsFindings) {
        throw BadInput(
            "--model synth: the built-in synthesizer does not refine; use --search "
            "best-of-n (its tilings are the candidates)");
      }
      if (!options.promptFile.empty()) {
        throw BadInput("--prompt " + options.promptFile +
                       ": the built-in synthesizer reads no prompt");
      }
      return std::make_unique<SynthGenerator>();
    case ModelKind::Embedded:
      throw GeneratorUnavailable(
          "--model " + choice.value +
          ": the embedded model engine (crucible-model) is not available in this build; serve "
          "the model with vLLM, SGLang, llama.cpp or Ollama and pass its URL");
    case ModelKind::Endpoint:
      return std::make_unique<EndpointGenerator>(
          EndpointConfig{choice.value, options.endpointModel, apiKeyFromEnvironment()},
          std::move(promptTemplate));
  }
  return nullptr;
}

}  // namespace crucible::generate
