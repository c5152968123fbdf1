#pragma once
// One evaluation asked of `crucible serve`: the reference and the kernel (code or a raw model
// response), and the verification's settings. Field names follow KernelGYM's evaluation server
// (`task_id`, `reference_code`, `kernel_code`), so a trainer written against it can point here.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace crucible::serve {

/// A request the service refuses, with the HTTP status and a message for the caller.
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

/// What the service accepts at most.
struct RequestLimits {
  std::size_t maxCodeBytes = 256 * 1024;  // each of reference_code and kernel_code
  double maxTimeoutSeconds = 900;         // the candidate's stage, wall clock
  int maxTrials = 50;
};

struct EvalRequest {
  std::string taskId;         // the caller's id; idempotent: the same id and request, one job
  std::string referenceCode;  // a KernelBench-style reference module
  std::string kernelCode;     // ModelNew's code, or a raw model response holding it
  std::string backend;        // "" = the service's default
  int trials = 5;
  double timeoutSeconds = 300;
  std::string rewardPreset = "tritonrl";
  bool compileBaseline = true;
  int seed = 42;

  /// A digest of everything the result depends on (not the id): a resubmitted id must match it.
  std::string digest() const;
  bool operator==(const EvalRequest&) const = default;
};

/// Reads a request body's object; RequestError (400) naming the field for anything missing, of
/// the wrong type or beyond `limits`. A missing task_id is left empty (the service makes one).
EvalRequest parseEvalRequest(const nlohmann::json& body, const RequestLimits& limits);

/// A job's result when no verdict could be given: `{"evaluation": ...}` with verdict error (null
/// for the caller's own error, blame "user") and the error's stage, message and blame.
nlohmann::json failedResult(const std::string& stage, const std::string& message,
                            const std::string& blame, const EvalRequest& request);

void to_json(nlohmann::json& j, const EvalRequest& request);
void from_json(const nlohmann::json& j, EvalRequest& request);

}  // namespace crucible::serve
