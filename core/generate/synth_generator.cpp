#include "core/generate/synth_generator.h"

#include <utility>

#include "core/kernel_synth/synthesizer.h"
#include "core/verify/verifier.h"

namespace crucible::generate {

void SynthGenerator::generate(const GenerateRequest& request, std::stop_token stop,
                              const TokenCallback& onToken, const CandidateCallback& onCandidate) {
  kernel_synth::SynthRequest synthRequest;
  synthRequest.referencePath = request.referencePath;
  synthRequest.maxCandidates = request.n;
  if (!request.backend.empty()) synthRequest.backend = request.backend;
  if (request.seed) synthRequest.seed = static_cast<int>(*request.seed);

  kernel_synth::SynthResult result;
  try {
    result = kernel_synth::synthesize(synthRequest, stop, [&](const std::string& text) {
      if (onToken) onToken(-1, text);
    });
  } catch (const BadInput&) {
    throw;
  } catch (const std::exception& e) {
    if (stop.stop_requested()) return;  // synthesize() reports a cancel as an exception
    throw GenerateError(std::string("the built-in synthesizer failed: ") + e.what());
  }
  if (result.candidates.empty()) {
    std::string message = "the built-in synthesizer cannot lower this reference:";
    for (const std::string& op : result.unsupported) message += "\n  " + op;
    message +=
        "\nA model can write kernels for what the synthesizer cannot: --model "
        "http://host:port/v1 (an OpenAI-compatible endpoint) or --model PATH (a local model "
        "for the embedded engine).";
    throw GenerateError(message);
  }
  int index = 0;
  for (kernel_synth::SynthCandidate& candidate : result.candidates) {
    if (stop.stop_requested()) return;
    GeneratedCandidate generated;
    generated.index = index++;
    generated.origin = origin();
    generated.model = modelId();
    generated.plan = std::move(candidate.plan);
    generated.code = std::move(candidate.code);
    generated.label = std::move(candidate.label);
    onCandidate(std::move(generated));
  }
}

}  // namespace crucible::generate
