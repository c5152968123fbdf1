#include "core/store/store.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>

#include "core/store/migrations.h"
#include "core/util/sha256.h"

namespace crucible::store {

namespace {

using nlohmann::json;

constexpr int kBusyTimeoutMs = 5000;

// Creates the file's folder, then opens it. ":memory:" (tests) has no folder.
Connection openConnection(const std::string& path) {
  if (path.empty()) throw StoreError("database path is empty");
  if (path != ":memory:") {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
      std::error_code error;
      std::filesystem::create_directories(parent, error);
      if (error) {
        throw StoreError("database '" + path + "': cannot create the folder '" + parent.string() +
                         "': " + error.message());
      }
    }
  }
  return Connection(path, kBusyTimeoutMs);
}

// Text that SQLite and later json::parse accept: invalid UTF-8 becomes U+FFFD instead of
// throwing, so a candidate with odd bytes in its output can still be saved.
std::string dumpJson(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

template <typename T>
std::optional<T> optionalOf(bool present, T value) {
  return present ? std::optional<T>(std::move(value)) : std::nullopt;
}

}  // namespace

std::string utcTimestamp() {
  using namespace std::chrono;
  const auto sinceEpoch = duration_cast<milliseconds>(system_clock::now().time_since_epoch());
  const std::time_t seconds = static_cast<std::time_t>(sinceEpoch.count() / 1000);
  const int millis = static_cast<int>(sinceEpoch.count() % 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const std::size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof text - length, ".%03dZ", millis);
  return text;
}

std::string Store::defaultDatabasePath() {
  const auto absolute = [](const char* value) {
    return value != nullptr && value[0] != '\0' && std::filesystem::path(value).is_absolute();
  };
  const char* dataHome = std::getenv("XDG_DATA_HOME");  // NOLINT(concurrency-mt-unsafe)
  if (absolute(dataHome)) {
    return (std::filesystem::path(dataHome) / "crucible" / "crucible.db").string();
  }
  const char* home = std::getenv("HOME");  // NOLINT(concurrency-mt-unsafe)
  if (absolute(home)) {
    return (std::filesystem::path(home) / ".local" / "share" / "crucible" / "crucible.db").string();
  }
  throw StoreError(
      "no place for the database: neither XDG_DATA_HOME nor HOME is set to an absolute path "
      "(pass --db FILE)");
}

Store::Store(const std::string& path) : connection_(openConnection(path)) {
  // Look before writing anything: the journal-mode switch below already changes the file.
  checkSchemaCompatible(connection_, schemaMigrations());
  if (sqlite3_db_readonly(connection_.handle(), "main") == 1) {
    connection_.failPlain("the file is read-only; Crucible needs to write to its database");
  }
  connection_.exec("PRAGMA foreign_keys = ON", "turning on foreign keys");
  if (connection_.queryInt("PRAGMA foreign_keys", "checking foreign keys") != 1) {
    connection_.failPlain("this SQLite was built without foreign keys");
  }
  const std::string mode = connection_.queryTextRetryingBusy("PRAGMA journal_mode = WAL",
                                                             "switching to the WAL journal");
  if (mode != "wal" && mode != "memory") {
    connection_.failPlain("cannot switch to the WAL journal (journal mode is '" + mode + "')");
  }
  migrate(connection_, schemaMigrations());
}

int Store::schemaVersion() {
  return static_cast<int>(connection_.queryInt("PRAGMA user_version", "reading the version"));
}

SavedIds Store::recordVerification(const VerificationRecord& record) {
  const std::string now = utcTimestamp();
  SavedIds ids;
  Transaction transaction(connection_, Transaction::Kind::Immediate);
  ids.taskId = findOrAddTask(record.task, now);
  ids.sessionId = addSession(ids.taskId, kSessionKindVerify, record.note, now);
  ids.candidateId = addCandidate(ids.sessionId, ids.taskId, record.candidate, now);
  ids.evaluationId = addEvaluation(ids.candidateId, record.evaluation, now);
  transaction.commit();
  return ids;
}

SavedIds Store::startSession(const TaskInput& task, std::string_view kind,
                             const std::string& note) {
  const std::string now = utcTimestamp();
  SavedIds ids;
  Transaction transaction(connection_, Transaction::Kind::Immediate);
  ids.taskId = findOrAddTask(task, now);
  ids.sessionId = addSession(ids.taskId, kind, note, now);
  transaction.commit();
  return ids;
}

std::int64_t Store::addCandidateTo(std::int64_t sessionId, const CandidateInput& candidate) {
  Transaction transaction(connection_, Transaction::Kind::Immediate);
  Statement find(connection_, "SELECT task_id FROM sessions WHERE id = ?1");
  find.bindAll(sessionId);
  if (!find.step()) connection_.failPlain("there is no session " + std::to_string(sessionId));
  if (candidate.parentId) {
    // A refinement's lineage stays inside its session.
    Statement parent(connection_, "SELECT session_id FROM candidates WHERE id = ?1");
    parent.bindAll(*candidate.parentId);
    if (!parent.step() || parent.int64At(0) != sessionId) {
      connection_.failPlain("parent candidate " + std::to_string(*candidate.parentId) +
                            " is not in session " + std::to_string(sessionId));
    }
  }
  const std::int64_t id = addCandidate(sessionId, find.int64At(0), candidate, utcTimestamp());
  transaction.commit();
  return id;
}

std::int64_t Store::addEvaluationTo(std::int64_t candidateId, const Evaluation& evaluation) {
  Transaction transaction(connection_, Transaction::Kind::Immediate);
  const std::int64_t id = addEvaluation(candidateId, evaluation, utcTimestamp());
  transaction.commit();
  return id;
}

void Store::recordExport(std::int64_t candidateId, const std::string& path) {
  Transaction transaction(connection_, Transaction::Kind::Immediate);
  Statement insert(connection_,
                   "INSERT INTO exports (candidate_id, path, created_at) VALUES (?1, ?2, ?3)");
  insert.bindAll(candidateId, path, utcTimestamp()).run();
  transaction.commit();
}

std::int64_t Store::findOrAddTask(const TaskInput& task, const std::string& now) {
  const std::string hash = util::sha256Hex(task.source);
  {
    Statement find(connection_, "SELECT id, name, path FROM tasks WHERE sha256 = ?1");
    find.bindAll(hash);
    if (find.step()) {
      const std::int64_t id = find.int64At(0);
      // A task keeps the name and path it was first saved under; only blanks are filled in.
      if ((find.textAt(1).empty() && !task.name.empty()) ||
          (find.textAt(2).empty() && !task.path.empty())) {
        Statement fill(connection_,
                       "UPDATE tasks SET name = CASE WHEN name = '' THEN ?2 ELSE name END, "
                       "path = CASE WHEN path = '' THEN ?3 ELSE path END WHERE id = ?1");
        fill.bindAll(id, task.name, task.path).run();
      }
      return id;
    }
  }
  Statement insert(connection_,
                   "INSERT INTO tasks (name, path, source, sha256, created_at) "
                   "VALUES (?1, ?2, ?3, ?4, ?5)");
  insert.bindAll(task.name, task.path, task.source, hash, now).run();
  return connection_.lastInsertRowid();
}

std::int64_t Store::addSession(std::int64_t taskId, std::string_view kind, const std::string& note,
                               const std::string& now) {
  Statement insert(
      connection_,
      "INSERT INTO sessions (task_id, kind, created_at, note) VALUES (?1, ?2, ?3, ?4)");
  insert.bindAll(taskId, kind, now, note).run();
  return connection_.lastInsertRowid();
}

std::int64_t Store::addCandidate(std::int64_t sessionId, std::int64_t taskId,
                                 const CandidateInput& candidate, const std::string& now) {
  Statement insert(connection_,
                   "INSERT INTO candidates (session_id, task_id, origin, model, prompt, "
                   "raw_response, plan, code, path, parent_id, sha256, created_at) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  insert
      .bindAll(sessionId, taskId, candidate.origin, candidate.model, candidate.prompt,
               candidate.rawResponse, candidate.plan, candidate.code, candidate.path,
               candidate.parentId, util::sha256Hex(candidate.code), now)
      .run();
  return connection_.lastInsertRowid();
}

std::int64_t Store::addEvaluation(std::int64_t candidateId, const Evaluation& e,
                                  const std::string& now) {
  const bool failed = e.error.has_value();
  Statement insert(
      connection_,
      "INSERT INTO evaluations (candidate_id, backend, device, verdict, correct, speedup, "
      "reference_ms, candidate_ms, compile_reference_ms, error_stage, error_message, error_blame, "
      "reward_preset, reward_total, sandboxed, environment_json, facts_json, report_json, "
      "created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
      "?19)");
  insert
      .bindAll(candidateId, e.backend, e.device, toString(e.verdict), e.correct, e.speedup,
               e.timing.referenceMs, e.timing.candidateMs, e.timing.compileReferenceMs,
               optionalOf(failed, failed ? e.error->stage : std::string()),
               optionalOf(failed, failed ? e.error->message : std::string()),
               optionalOf(failed, failed ? e.error->blame : std::string()), e.reward.preset,
               e.reward.total, e.sandboxed, dumpJson(e.environment), dumpJson(e.facts),
               dumpJson(json(e)), now)
      .run();
  const std::int64_t evaluationId = connection_.lastInsertRowid();

  Statement flag(connection_,
                 "INSERT INTO flags (evaluation_id, flag_id, severity, message, line, "
                 "evidence_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  for (const Flag& f : e.flags) {
    flag.bindAll(evaluationId, f.id, toString(f.severity), f.message, f.line, dumpJson(f.evidence));
    flag.run();
    flag.reset();
  }
  Statement component(connection_,
                      "INSERT INTO reward_components (evaluation_id, name, part, value, position) "
                      "VALUES (?1, ?2, ?3, ?4, ?5)");
  int position = 0;
  for (const RewardComponent& c : e.reward.components) {
    component.bindAll(evaluationId, c.name, c.part, c.value, position++);
    component.run();
    component.reset();
  }
  return evaluationId;
}

std::vector<SessionSummary> Store::listSessions(const SessionFilter& filter) {
  // The best evaluation of each session is picked by a correlated subquery so that, without a
  // verdict filter, SQLite walks sessions newest first and stops at the limit.
  Statement query(connection_, R"sql(
SELECT x.id, x.created_at, x.kind, x.note, x.task_id, x.task_name, x.candidate_count,
       b.verdict, b.speedup,
       (SELECT count(*) FROM flags f WHERE f.evaluation_id = b.id)
FROM (
  SELECT s.id, s.created_at, s.kind, s.note, t.id AS task_id, t.name AS task_name,
         (SELECT count(*) FROM candidates c WHERE c.session_id = s.id) AS candidate_count,
         (SELECT e.id FROM candidates c JOIN evaluations e ON e.candidate_id = c.id
           WHERE c.session_id = s.id
           ORDER BY CASE e.verdict WHEN 'verified' THEN 0 WHEN 'incorrect' THEN 1
                                   WHEN 'cheating' THEN 2 WHEN 'invalid' THEN 3 ELSE 4 END,
                    e.speedup IS NULL, e.speedup DESC, e.id
           LIMIT 1) AS best_id
  FROM sessions s JOIN tasks t ON t.id = s.task_id
  WHERE (?1 = '' OR instr(lower(t.name), lower(?1)) > 0 OR instr(lower(t.path), lower(?1)) > 0)
    AND (?4 = '' OR EXISTS (SELECT 1 FROM candidates m WHERE m.session_id = s.id
                             AND (instr(lower(m.model), lower(?4)) > 0
                                  OR instr(lower(m.origin), lower(?4)) > 0)))
    AND (?5 = '' OR s.created_at >= ?5)
    AND (?6 = '' OR s.created_at < ?6)
) x
LEFT JOIN evaluations b ON b.id = x.best_id
WHERE ?2 IS NULL OR b.verdict = ?2
ORDER BY x.created_at DESC, x.id DESC
LIMIT ?3
)sql");
  std::optional<std::string> verdict;
  if (filter.verdict) verdict = std::string(toString(*filter.verdict));
  query.bindAll(filter.taskText, verdict,
                static_cast<std::int64_t>(filter.limit > 0 ? filter.limit : -1), filter.modelText,
                filter.since, filter.until);

  std::vector<SessionSummary> sessions;
  while (query.step()) {
    SessionSummary s;
    s.id = query.int64At(0);
    s.createdAt = query.textAt(1);
    s.kind = query.textAt(2);
    s.note = query.textAt(3);
    s.taskId = query.int64At(4);
    s.taskName = query.textAt(5);
    s.candidateCount = static_cast<int>(query.int64At(6));
    if (!query.isNull(7)) {
      s.verdict = verdictFromString(query.textAt(7));
      if (!s.verdict) {
        connection_.failPlain("session " + std::to_string(s.id) + " has an unknown verdict '" +
                              query.textAt(7) + "'");
      }
    }
    s.speedup = query.optionalDoubleAt(8);
    s.flagCount = static_cast<int>(query.int64At(9));
    sessions.push_back(std::move(s));
  }
  return sessions;
}

std::optional<SessionDetail> Store::session(std::int64_t id) {
  // One snapshot for the three reads, so a writer in between cannot tear the session.
  Transaction read(connection_, Transaction::Kind::Deferred);
  SessionDetail detail;
  {
    Statement query(connection_,
                    "SELECT s.id, s.kind, s.created_at, s.note, t.id, t.name, t.path, t.source, "
                    "t.sha256, t.created_at FROM sessions s JOIN tasks t ON t.id = s.task_id "
                    "WHERE s.id = ?1");
    query.bindAll(id);
    if (!query.step()) return std::nullopt;
    detail.id = query.int64At(0);
    detail.kind = query.textAt(1);
    detail.createdAt = query.textAt(2);
    detail.note = query.textAt(3);
    detail.task = TaskRecord{query.int64At(4), query.textAt(5), query.textAt(6),
                             query.textAt(7),  query.textAt(8), query.textAt(9)};
  }
  std::map<std::int64_t, std::size_t> candidateIndex;
  {
    Statement query(connection_,
                    "SELECT id, origin, model, prompt, raw_response, plan, code, path, parent_id, "
                    "sha256, created_at FROM candidates WHERE session_id = ?1 ORDER BY id");
    query.bindAll(id);
    while (query.step()) {
      CandidateRecord c;
      c.id = query.int64At(0);
      c.origin = query.textAt(1);
      c.model = query.textAt(2);
      c.prompt = query.textAt(3);
      c.rawResponse = query.textAt(4);
      c.plan = query.textAt(5);
      c.code = query.textAt(6);
      c.path = query.textAt(7);
      c.parentId = query.optionalInt64At(8);
      c.sha256 = query.textAt(9);
      c.createdAt = query.textAt(10);
      candidateIndex[c.id] = detail.candidates.size();
      detail.candidates.push_back(std::move(c));
    }
  }
  {
    Statement query(connection_,
                    "SELECT e.candidate_id, e.id, e.created_at, e.report_json FROM evaluations e "
                    "JOIN candidates c ON c.id = e.candidate_id WHERE c.session_id = ?1 "
                    "ORDER BY e.id");
    query.bindAll(id);
    while (query.step()) {
      EvaluationRecord record;
      record.id = query.int64At(1);
      record.createdAt = query.textAt(2);
      try {
        record.evaluation = json::parse(query.textAt(3)).get<Evaluation>();
      } catch (const std::exception& error) {
        connection_.failPlain("evaluation " + std::to_string(record.id) +
                              ": the stored report cannot be read: " + error.what());
      }
      detail.candidates[candidateIndex.at(query.int64At(0))].evaluations.push_back(
          std::move(record));
    }
  }
  read.commit();
  return detail;
}

void to_json(json& j, const SessionSummary& s) {
  j = json{{"id", s.id},
           {"created_at", s.createdAt},
           {"kind", s.kind},
           {"note", s.note},
           {"task_id", s.taskId},
           {"task", s.taskName},
           {"candidates", s.candidateCount},
           {"verdict", s.verdict ? json(toString(*s.verdict)) : json(nullptr)},
           {"speedup", s.speedup ? json(*s.speedup) : json(nullptr)},
           {"flags", s.flagCount}};
}

void to_json(json& j, const TaskRecord& t) {
  j = json{{"id", t.id},         {"name", t.name},     {"path", t.path},
           {"sha256", t.sha256}, {"source", t.source}, {"created_at", t.createdAt}};
}

void to_json(json& j, const EvaluationRecord& e) {
  j = json{{"id", e.id}, {"created_at", e.createdAt}, {"evaluation", e.evaluation}};
}

void to_json(json& j, const CandidateRecord& c) {
  j = json{{"id", c.id},
           {"origin", c.origin},
           {"model", c.model},
           {"prompt", c.prompt},
           {"raw_response", c.rawResponse},
           {"plan", c.plan},
           {"code", c.code},
           {"path", c.path},
           {"parent_id", c.parentId ? json(*c.parentId) : json(nullptr)},
           {"sha256", c.sha256},
           {"created_at", c.createdAt},
           {"evaluations", c.evaluations}};
}

void to_json(json& j, const SessionDetail& s) {
  j = json{{"id", s.id},     {"kind", s.kind}, {"created_at", s.createdAt},
           {"note", s.note}, {"task", s.task}, {"candidates", s.candidates}};
}

}  // namespace crucible::store
