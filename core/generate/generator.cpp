#include "core/generate/generator.h"

namespace crucible::generate {

void to_json(nlohmann::json& j, const GeneratedCandidate& c) {
  j = nlohmann::json{{"index", c.index},
                     {"origin", c.origin},
                     {"model", c.model},
                     {"prompt", c.prompt},
                     {"raw_response", c.rawResponse},
                     {"plan", c.plan},
                     {"code", c.code},
                     {"label", c.label},
                     {"error", c.error}};
}

void from_json(const nlohmann::json& j, GeneratedCandidate& c) {
  c.index = j.value("index", 0);
  c.origin = j.value("origin", "");
  c.model = j.value("model", "");
  c.prompt = j.value("prompt", "");
  c.rawResponse = j.value("raw_response", "");
  c.plan = j.value("plan", "");
  c.code = j.value("code", "");
  c.label = j.value("label", "");
  c.error = j.value("error", "");
}

}  // namespace crucible::generate
