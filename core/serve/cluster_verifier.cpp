#include "core/serve/cluster_verifier.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "core/verify/bad_input.h"

namespace crucible::serve {

using nlohmann::json;

ClusterVerifier::ClusterVerifier(ServiceOptions options)
    : service_(std::make_unique<EvaluationService>(std::move(options))) {}

ClusterVerifier::~ClusterVerifier() = default;

Evaluation ClusterVerifier::verify(const VerifyRequest& request, std::stop_token stop) {
  std::ifstream in(request.referencePath, std::ios::binary);
  if (!in) throw BadInput(request.referencePath + ": cannot be read");
  std::ostringstream reference;
  reference << in.rdbuf();
  EvalRequest r;
  r.referenceCode = reference.str();
  r.kernelCode = request.candidateText.value_or("");
  r.backend = request.backend == "auto" ? "" : request.backend;
  r.trials = request.trials;
  r.timeoutSeconds = request.timeoutSeconds;
  r.rewardPreset = request.rewardPreset;
  r.compileBaseline = request.compileBaseline;
  r.seed = request.seed;
  Evaluation failed;
  failed.verdict = Verdict::Error;
  failed.backend = request.backend;
  failed.reward.preset = request.rewardPreset;
  try {
    const JobRecord job = service_->submit(r);
    const auto done = service_->wait(job.id, std::chrono::steady_clock::time_point::max(), stop);
    if (!done || done->state != JobState::Done || !done->result) {
      failed.error = EvalError{"infrastructure", "the lanes gave no result", "infrastructure"};
      return failed;
    }
    const json& evaluation = done->result->value("evaluation", json());
    if (evaluation.value("verdict", json()).is_null()) {
      throw BadInput(evaluation.value("error", json::object()).value("message", "refused"));
    }
    return evaluation.get<Evaluation>();
  } catch (const RequestError& e) {
    failed.error = EvalError{"infrastructure", e.what(), "infrastructure"};
    return failed;
  }
}

}  // namespace crucible::serve
