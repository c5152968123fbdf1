#pragma once
// A lane's side of the service (`crucible lane`, docs/SERVE.md): one long-lived process per
// device that reads jobs as JSON lines on stdin, verifies each in turn with the verifier, and
// writes each result as a JSON line on stdout. Its reference runs and reference timers are kept
// between jobs (a trainer sends many candidates per reference). The service starts it with the
// device pinned in its environment, and when it dies, the job it had is retried elsewhere.

#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/serve/eval_request.h"

namespace crucible {
class ReferenceCache;
class BaselineKeeper;
}  // namespace crucible

namespace crucible::serve {

struct LaneOptions {
  std::string backend = "auto";  // a request's own backend wins
  std::string scratch;           // where references are written; "" = a new temporary folder
};

/// What one verification gives back: the evaluation as `crucible verify --json` prints it
/// (`evaluation`), the code that ran, whether it came from a model response and its plan.
/// A reference the verifier refuses is the caller's error (verdict null, blame "user"); anything
/// else that goes wrong here is the infrastructure's.
class LaneVerifier {
 public:
  explicit LaneVerifier(LaneOptions options);
  ~LaneVerifier();
  nlohmann::json evaluate(const EvalRequest& request);

 private:
  std::string referenceFile(const std::string& code);
  LaneOptions options_;
  std::shared_ptr<ReferenceCache> references_;
  std::shared_ptr<BaselineKeeper> timers_;
};

/// Reads `{"job": ID, "request": {...}}` lines until end of input or `{"op": "quit"}` and
/// writes `{"job": ID, ...result}` for each; first writes `{"ready": true, ...}`. Returns 0.
int runLaneLoop(std::istream& in, std::ostream& out, const LaneOptions& options);

}  // namespace crucible::serve
