#pragma once
// The evaluation service's jobs in SQLite (the store's `service_jobs`, migration 2): a job is
// written before it is acknowledged, its state follows it, and its result is kept, so that a
// restarted service loses nothing it accepted. Thread-safe: one connection behind a mutex.

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/serve/eval_request.h"
#include "core/store/sqlite.h"
#include "core/store/store.h"

namespace crucible::serve {

enum class JobState { Queued, Running, Done };
std::string jobStateName(JobState state);

struct JobRecord {
  std::string id;
  std::string digest;  // EvalRequest::digest()
  EvalRequest request;
  JobState state = JobState::Queued;
  int attempts = 0;  // lanes the job was handed to
  std::string lane;  // the last one
  std::optional<nlohmann::json> result;
  std::optional<std::int64_t> sessionId;  // the stored verification
  std::string createdAt, updatedAt;
};

class JobTable {
 public:
  /// Opens (creating and migrating) the database at `path`.
  explicit JobTable(const std::string& path);

  /// The job under `id`, written as queued when new (second: true), else as it stands.
  std::pair<JobRecord, bool> insertOrGet(const std::string& id, const EvalRequest& request);
  std::optional<JobRecord> find(const std::string& id);
  void markRunning(const std::string& id, const std::string& lane, int attempts);
  void markQueued(const std::string& id);
  /// Done, with its result; the verification is recorded in the store's sessions first when
  /// `record` is given (so the workbench lists it), and its session id kept.
  void finish(const std::string& id, const nlohmann::json& result,
              const std::optional<store::VerificationRecord>& record);
  /// Jobs not done, oldest first: what a starting service queues again.
  std::vector<JobRecord> unfinished();
  /// Jobs per state.
  std::map<std::string, std::int64_t> counts();

 private:
  JobRecord readRow(store::Statement& row);
  std::mutex mutex_;
  store::Store store_;  // migrates the file, and records finished verifications
  store::Connection connection_;
};

}  // namespace crucible::serve
