#include "core/serve/job_table.h"

#include <map>

namespace crucible::serve {

namespace {

using nlohmann::json;

constexpr int kBusyTimeoutMs = 5000;
constexpr const char* kColumns =
    "id, request_digest, request_json, state, attempts, lane, result_json, session_id, "
    "created_at, updated_at";

JobState stateFrom(const std::string& text) {
  if (text == "running") return JobState::Running;
  if (text == "done") return JobState::Done;
  return JobState::Queued;
}

}  // namespace

std::string jobStateName(JobState state) {
  switch (state) {
    case JobState::Queued:
      return "queued";
    case JobState::Running:
      return "running";
    case JobState::Done:
      return "done";
  }
  return "queued";
}

JobTable::JobTable(const std::string& path) : store_(path), connection_(path, kBusyTimeoutMs) {
  connection_.exec("PRAGMA foreign_keys = ON", "turning on foreign keys");
}

JobRecord JobTable::readRow(store::Statement& row) {
  JobRecord r;
  r.id = row.textAt(0);
  r.digest = row.textAt(1);
  r.request = json::parse(row.textAt(2)).get<EvalRequest>();
  r.state = stateFrom(row.textAt(3));
  r.attempts = static_cast<int>(row.int64At(4));
  r.lane = row.textAt(5);
  if (auto text = row.optionalTextAt(6)) r.result = json::parse(*text, nullptr, false);
  r.sessionId = row.optionalInt64At(7);
  r.createdAt = row.textAt(8);
  r.updatedAt = row.textAt(9);
  return r;
}

std::pair<JobRecord, bool> JobTable::insertOrGet(const std::string& id,
                                                 const EvalRequest& request) {
  std::lock_guard lock(mutex_);
  store::Transaction transaction(connection_);
  {
    store::Statement find(connection_,
                          std::string("SELECT ") + kColumns + " FROM service_jobs WHERE id = ?");
    find.bindAll(id);
    if (find.step()) return {readRow(find), false};
  }
  const std::string now = store::utcTimestamp();
  JobRecord r;
  r.id = id;
  r.digest = request.digest();
  r.request = request;
  r.createdAt = r.updatedAt = now;
  store::Statement insert(connection_,
                          "INSERT INTO service_jobs (id, request_digest, request_json, state, "
                          "created_at, updated_at) VALUES (?, ?, ?, 'queued', ?, ?)");
  insert.bindAll(id, r.digest, json(request).dump(), now, now);
  insert.run();
  transaction.commit();
  return {r, true};
}

std::optional<JobRecord> JobTable::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  store::Statement find(connection_,
                        std::string("SELECT ") + kColumns + " FROM service_jobs WHERE id = ?");
  find.bindAll(id);
  if (!find.step()) return std::nullopt;
  return readRow(find);
}

void JobTable::markRunning(const std::string& id, const std::string& lane, int attempts) {
  std::lock_guard lock(mutex_);
  store::Statement update(connection_,
                          "UPDATE service_jobs SET state = 'running', lane = ?, attempts = ?, "
                          "updated_at = ? WHERE id = ?");
  update.bindAll(lane, attempts, store::utcTimestamp(), id);
  update.run();
}

void JobTable::markQueued(const std::string& id) {
  std::lock_guard lock(mutex_);
  store::Statement update(connection_,
                          "UPDATE service_jobs SET state = 'queued', updated_at = ? WHERE id = ?");
  update.bindAll(store::utcTimestamp(), id);
  update.run();
}

void JobTable::finish(const std::string& id, const json& result,
                      const std::optional<store::VerificationRecord>& record) {
  std::lock_guard lock(mutex_);
  std::optional<std::int64_t> session;
  if (record) session = store_.recordVerification(*record).sessionId;
  store::Statement update(connection_,
                          "UPDATE service_jobs SET state = 'done', result_json = ?, "
                          "session_id = ?, updated_at = ? WHERE id = ?");
  update.bindAll(result.dump(-1, ' ', false, json::error_handler_t::replace), session,
                 store::utcTimestamp(), id);
  update.run();
}

std::vector<JobRecord> JobTable::unfinished() {
  std::lock_guard lock(mutex_);
  store::Statement rows(connection_, std::string("SELECT ") + kColumns +
                                         " FROM service_jobs WHERE state != 'done' "
                                         "ORDER BY created_at, id");
  std::vector<JobRecord> out;
  while (rows.step()) out.push_back(readRow(rows));
  return out;
}

std::map<std::string, std::int64_t> JobTable::counts() {
  std::lock_guard lock(mutex_);
  store::Statement rows(connection_, "SELECT state, COUNT(*) FROM service_jobs GROUP BY state");
  std::map<std::string, std::int64_t> out{{"queued", 0}, {"running", 0}, {"done", 0}};
  while (rows.step()) out[rows.textAt(0)] = rows.int64At(1);
  return out;
}

}  // namespace crucible::serve
