#include "core/generate/response_parser.h"

#include "core/verify/extract.h"

namespace crucible::generate {

void parseResponse(GeneratedCandidate& candidate, const std::string& finishReason) {
  candidate.plan.clear();
  candidate.code.clear();
  candidate.error.clear();
  const auto extracted = extractCandidate(candidate.rawResponse);
  // A language model's answer must show ModelNew; unfenced text without it is prose, not code.
  if (extracted && extracted->code.find("class ModelNew") != std::string::npos) {
    candidate.plan = extracted->plan;
    candidate.code = extracted->code;
    return;
  }
  candidate.error = candidate.rawResponse.empty()
                        ? "the model returned an empty answer"
                        : "the answer has no code block that defines class ModelNew";
  if (finishReason == "length") candidate.error += " (it was cut off at the token limit)";
}

}  // namespace crucible::generate
