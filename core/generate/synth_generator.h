#pragma once
// The built-in synthesizer (core/kernel_synth) as a Generator: it traces the reference once and
// offers one candidate per tiling. It does not stream tokens; its progress text arrives through
// onToken(-1, text).

#include "core/generate/generator.h"

namespace crucible::generate {

class SynthGenerator : public Generator {
 public:
  std::string origin() const override { return "synth"; }
  std::string modelId() const override { return "synth"; }
  /// Throws BadInput for a reference that does not load or trace, GenerateError when an op cannot
  /// be lowered (naming each with its line) or the worker fails.
  void generate(const GenerateRequest& request, std::stop_token stop, const TokenCallback& onToken,
                const CandidateCallback& onCandidate) override;
};

}  // namespace crucible::generate
