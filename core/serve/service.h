#pragma once
// `crucible serve`'s evaluation service: jobs accepted into SQLite first (job_table.h), a
// bounded queue, and one lane process per device (lane_loop.h) that verifies them in turn. A
// lane that dies takes no result with it: its job is tried once more on a fresh lane, then
// reported as an infrastructure error (never as a verdict or a zero reward). Jobs not done when
// the service went down are queued again when it starts.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/serve/eval_request.h"
#include "core/serve/job_table.h"
#include "core/serve/lanes.h"

namespace crucible::proc {
class LineChild;
}

namespace crucible::serve {

struct ServiceOptions {
  std::vector<LaneSpec> lanes;
  std::string db;              // the SQLite file (the store's)
  std::string laneProgram;     // the crucible binary; its `lane` command
  std::size_t maxQueue = 256;  // jobs waiting beyond this are refused (429)
  RequestLimits limits;
  std::chrono::seconds laneStartLimit{300};  // a lane that is not ready by then is down
  int maxAttempts = 2;                       // lanes a job is handed to before giving up
  // Lanes as Ray actors (integrations/ray/crucible_ray/lane.py): the cluster's address, the
  // Python that has ray, and the bridge script. Empty address: lanes are local processes.
  std::string rayAddress;
  std::string rayPython;
  std::string rayBridge;
};

class EvaluationService {
 public:
  explicit EvaluationService(ServiceOptions options);
  /// Stops the lanes (their jobs stay queued in the database for the next start).
  ~EvaluationService();
  EvaluationService(const EvaluationService&) = delete;
  EvaluationService& operator=(const EvaluationService&) = delete;

  /// Accepts a request (written before this returns) or finds the job already under its id.
  /// RequestError: 409 for a known id with another request, 429 when the queue is full, 400
  /// when no lane runs the backend asked for.
  JobRecord submit(EvalRequest request);
  /// The job once done, or as it stands at `deadline` or on a stop request; nullopt if unknown.
  std::optional<JobRecord> wait(const std::string& id,
                                std::chrono::steady_clock::time_point deadline,
                                std::stop_token stop = {});
  std::optional<JobRecord> find(const std::string& id);
  /// Lanes, queue and job counts, for GET /health.
  nlohmann::json health();
  std::size_t queueCapacity() const { return options_.maxQueue; }

 private:
  struct Lane;
  void run(Lane& lane, std::stop_token stop);
  std::optional<std::string> takeJob(Lane& lane, std::stop_token stop);
  bool ready(Lane& lane, std::stop_token stop);
  std::string lastError(Lane& lane);
  void finish(const std::string& id, const nlohmann::json& result);
  void requeueOrFail(Lane& lane, const std::string& id, int attempts, const std::string& why);

  ServiceOptions options_;
  JobTable table_;
  std::mutex mutex_;
  std::condition_variable_any changed_;
  std::deque<std::string> queue_;                // ids of queued jobs, oldest first
  std::map<std::string, std::string> backends_;  // queued id -> the backend it asks for
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::jthread> threads_;  // last: stopped and joined before the rest goes
};

/// The body GET /results and POST /evaluate answer with for a done job: the evaluation as
/// `crucible verify --json` prints it, with `task_id` and `status` (completed, or failed when
/// the infrastructure gave no verdict).
nlohmann::json resultBody(const JobRecord& job);
/// GET /status's body: the job's id, state, attempts and lane.
nlohmann::json statusBody(const JobRecord& job);

}  // namespace crucible::serve
