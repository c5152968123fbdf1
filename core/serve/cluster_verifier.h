#pragma once
// Verification on the service's lanes instead of in this process: `crucible bench --cluster`
// runs an evaluation service in-process whose lanes are Ray actors on a cluster, and its
// pipeline hands each candidate to it (GenerationRequest::verifier). The jobs are kept in a
// database of the run's own, so a lane that dies costs a retry, not the task.

#include <memory>
#include <stop_token>

#include "core/serve/service.h"
#include "core/verify/evaluation.h"
#include "core/verify/verifier.h"

namespace crucible::serve {

class ClusterVerifier {
 public:
  explicit ClusterVerifier(ServiceOptions options);
  ~ClusterVerifier();

  /// The candidate of `request` (its candidateText) against its reference, judged on a lane;
  /// an infrastructure error (blame "infrastructure") when no lane could judge it. Throws
  /// BadInput when the reference cannot be read.
  Evaluation verify(const VerifyRequest& request, std::stop_token stop);

 private:
  std::unique_ptr<EvaluationService> service_;
};

}  // namespace crucible::serve
