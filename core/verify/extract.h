#pragma once
// A candidate may be a raw model response: take the code from its last fenced block that
// defines ModelNew, and keep the text before that block as the plan (TritonRL scores plan and
// code tokens apart).

#include <optional>
#include <string>
#include <string_view>

namespace crucible {

struct ExtractedCandidate {
  std::string code;
  std::string plan;  // text before the chosen block, <think> tags removed; "" for plain code
  bool fromResponse = false;
  int firstCodeLine = 1;  // line in the original text where the code starts
};

/// Returns the code and plan. Plain Python (no fences) is returned as is, except that a leading
/// `<think>...</think>` block (a reasoning model's unfenced answer) becomes the plan. nullopt when
/// the text has fenced blocks but none defines ModelNew and the text itself is not Python.
std::optional<ExtractedCandidate> extractCandidate(std::string_view text);

}  // namespace crucible
