#include "core/generate/generator_factory.h"

#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "core/generate/embedded_generator.h"
#include "core/generate/endpoint_generator.h"
#include "core/generate/prompt_library.h"
#include "core/generate/synth_generator.h"
#include "core/util/locations.h"
#include "core/verify/verifier.h"

namespace crucible::generate {

namespace {

bool validDevice(const std::string& device) {
  if (device == "cpu" || device == "cuda") return true;
  if (!device.starts_with("cuda:") || device.size() == 5) return false;
  return device.find_first_not_of("0123456789", 5) == std::string::npos;
}

ModelLoadOptions embeddedModel(const ModelChoice& choice, const GeneratorOptions& options) {
  ModelLoadOptions model;
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(choice.value, ec);
  model.path = (ec ? std::filesystem::path(choice.value) : absolute).lexically_normal().string();
  if (model.path.size() > 1 && model.path.back() == '/') model.path.pop_back();
  if (!options.device.empty()) model.device = options.device;
  if (!options.dtype.empty()) model.dtype = options.dtype;
  if (!validDevice(model.device)) {
    throw BadInput("--device " + model.device + ": expected cpu, cuda or cuda:N");
  }
  static const std::set<std::string> kDtypes = {"auto",     "float32", "float16",
                                                "bfloat16", "int8",    "int4"};
  if (!kDtypes.count(model.dtype)) {
    throw BadInput("--dtype " + model.dtype +
                   ": expected auto, float32, float16, bfloat16, int8 or int4");
  }
  if (!options.engine && locateModelEngine().empty()) {
    throw GeneratorUnavailable(
        "--model " + choice.value + ": the embedded model engine (crucible-model) is not in " +
        executableDir() +
        " (this build has none: it needs the project's torch; or set CRUCIBLE_MODEL_BIN); serve "
        "the model with vLLM, SGLang, llama.cpp or Ollama and pass its URL instead");
  }
  return model;
}

}  // namespace

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
  if (choice.kind != ModelKind::Embedded && (!options.device.empty() || !options.dtype.empty())) {
    throw BadInput(
        "--device and --dtype are for the embedded model (--model PATH of a model "
        "folder or .gguf file)");
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
      return std::make_unique<EmbeddedGenerator>(embeddedModel(choice, options), options.engine,
                                                 std::move(promptTemplate));
    case ModelKind::Endpoint:
      return std::make_unique<EndpointGenerator>(
          EndpointConfig{choice.value, options.endpointModel, apiKeyFromEnvironment()},
          std::move(promptTemplate));
  }
  return nullptr;
}

}  // namespace crucible::generate
