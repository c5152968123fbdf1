#include "core/store/migrations.h"

#include <string>

#include "core/store/sqlite.h"

namespace crucible::store {

namespace {

// Version 1. Conventions: ids are INTEGER PRIMARY KEY AUTOINCREMENT (never reused, so a stored
// session's id always names the same one); times are ISO-8601 UTC text
// ("2026-01-31T12:34:56.789Z"), which sorts as it reads; absent optional numbers are NULL; absent
// optional text is ''. Kinds, origins and verdicts are open sets of text without CHECKs, so adding
// one needs no table rebuild.
//
//  tasks              a reference program, identified by the SHA-256 of its source text; its
//                     name and path are those it was first recorded under.
//  sessions           one piece of work on a task: kind 'verify' (one candidate) or, later,
//                     'generate' (many); an optional note.
//  candidates         a kernel candidate: where it came from (origin 'file' | 'response' | ...),
//                     the model, prompt and raw response when generated, its plan and code, the
//                     file it was read from, the candidate it was refined from (parent_id), and
//                     the SHA-256 of its code.
//  evaluations        one verification of a candidate. The columns are what lists and filters
//                     need; report_json is the whole Evaluation JSON, from which the value is
//                     rebuilt exactly.
//  flags              the flags an evaluation raised, one row each, for queries across sessions.
//  reward_components  the reward breakdown, in the preset's order (position).
//  exports            where a candidate was exported to.
constexpr std::string_view kSchemaV1 = R"sql(
PRAGMA application_id = 1131574627;

CREATE TABLE tasks (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT NOT NULL,
  path        TEXT NOT NULL DEFAULT '',
  source      TEXT NOT NULL,
  sha256      TEXT NOT NULL UNIQUE,
  created_at  TEXT NOT NULL
);
CREATE INDEX tasks_name ON tasks(name);

CREATE TABLE sessions (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id     INTEGER NOT NULL REFERENCES tasks(id),
  kind        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  note        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_created_at ON sessions(created_at);
CREATE INDEX sessions_task ON sessions(task_id);

CREATE TABLE candidates (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id    INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  task_id       INTEGER NOT NULL REFERENCES tasks(id),
  origin        TEXT NOT NULL,
  model         TEXT NOT NULL DEFAULT '',
  prompt        TEXT NOT NULL DEFAULT '',
  raw_response  TEXT NOT NULL DEFAULT '',
  plan          TEXT NOT NULL DEFAULT '',
  code          TEXT NOT NULL,
  path          TEXT NOT NULL DEFAULT '',
  parent_id     INTEGER REFERENCES candidates(id) ON DELETE SET NULL,
  sha256        TEXT NOT NULL,
  created_at    TEXT NOT NULL
);
CREATE INDEX candidates_session ON candidates(session_id);
CREATE INDEX candidates_task ON candidates(task_id);
CREATE INDEX candidates_parent ON candidates(parent_id);
CREATE INDEX candidates_sha256 ON candidates(sha256);

CREATE TABLE evaluations (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  candidate_id          INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
  backend               TEXT NOT NULL,
  device                TEXT NOT NULL,
  verdict               TEXT NOT NULL,
  correct               INTEGER NOT NULL CHECK (correct IN (0, 1)),
  speedup               REAL,
  reference_ms          REAL,
  candidate_ms          REAL,
  compile_reference_ms  REAL,
  error_stage           TEXT,
  error_message         TEXT,
  error_blame           TEXT,
  reward_preset         TEXT NOT NULL DEFAULT '',
  reward_total          REAL,
  sandboxed             INTEGER NOT NULL CHECK (sandboxed IN (0, 1)),
  environment_json      TEXT NOT NULL DEFAULT '{}',
  facts_json            TEXT NOT NULL DEFAULT '{}',
  report_json           TEXT NOT NULL,
  created_at            TEXT NOT NULL
);
CREATE INDEX evaluations_candidate ON evaluations(candidate_id);
CREATE INDEX evaluations_verdict ON evaluations(verdict);
CREATE INDEX evaluations_created_at ON evaluations(created_at);

CREATE TABLE flags (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  evaluation_id  INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  flag_id        TEXT NOT NULL,
  severity       TEXT NOT NULL,
  message        TEXT NOT NULL DEFAULT '',
  line           INTEGER,
  evidence_json  TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX flags_evaluation ON flags(evaluation_id);
CREATE INDEX flags_flag ON flags(flag_id);

CREATE TABLE reward_components (
  evaluation_id  INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  name           TEXT NOT NULL,
  part           TEXT NOT NULL DEFAULT '',
  value          REAL,
  position       INTEGER NOT NULL,
  PRIMARY KEY (evaluation_id, position)
);

CREATE TABLE exports (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  candidate_id  INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
  path          TEXT NOT NULL,
  created_at    TEXT NOT NULL
);
CREATE INDEX exports_candidate ON exports(candidate_id);
)sql";

// Version 2: the evaluation service's jobs (`crucible serve`, core/serve). One row per job id:
// the request as JSON and its digest (a resubmitted id must match it), its state (queued |
// running | done), the attempts made (a job whose lane died is tried once more), the lane that
// ran it, and the result's JSON once done; session_id is the stored verification when there is
// one. Rows left 'running' by a service that went down are queued again when it starts.
constexpr std::string_view kSchemaV2 = R"sql(
CREATE TABLE service_jobs (
  id              TEXT PRIMARY KEY,
  request_digest  TEXT NOT NULL,
  request_json    TEXT NOT NULL,
  state           TEXT NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  lane            TEXT NOT NULL DEFAULT '',
  result_json     TEXT,
  session_id      INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);
CREATE INDEX service_jobs_state ON service_jobs(state, created_at);
)sql";

constexpr Migration kMigrations[] = {
    {1, "tasks, sessions, candidates, evaluations, flags, rewards, exports", kSchemaV1},
    {2, "the evaluation service's jobs", kSchemaV2},
};

std::int64_t userVersion(Connection& connection) {
  return connection.queryInt("PRAGMA user_version", "reading the schema version");
}

void checkList(Connection& connection, std::span<const Migration> migrations) {
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      connection.failPlain("internal error: schema migrations are not numbered 1, 2, 3, ...");
    }
  }
}

}  // namespace

std::span<const Migration> schemaMigrations() {
  return kMigrations;
}

int latestSchemaVersion() {
  return static_cast<int>(std::size(kMigrations));
}

void checkSchemaCompatible(Connection& connection, std::span<const Migration> migrations) {
  // One read transaction, so that the three answers come from one snapshot even while another
  // connection is migrating the same new file. The first read of the file: random bytes fail
  // here with SQLite's "file is not a database".
  Transaction snapshot(connection, Transaction::Kind::Deferred);
  const std::int64_t applicationId =
      connection.queryInt("PRAGMA application_id", "reading the database header");
  const std::int64_t version = userVersion(connection);
  const std::int64_t objects =
      connection.queryInt("SELECT count(*) FROM sqlite_master", "reading the schema");
  snapshot.commit();
  if (applicationId != kApplicationId && (applicationId != 0 || version != 0 || objects != 0)) {
    connection.failPlain("not a Crucible database (it belongs to another program: application_id " +
                         std::to_string(applicationId) + ", user_version " +
                         std::to_string(version) + "); refusing to change it");
  }
  const auto latest = static_cast<std::int64_t>(migrations.size());
  if (version > latest) {
    connection.failPlain("schema version " + std::to_string(version) +
                         " is newer than this build of Crucible supports (" +
                         std::to_string(latest) +
                         "); use a newer Crucible or another database file (left unchanged)");
  }
  if (version < 0) connection.failPlain("bad schema version " + std::to_string(version));
}

void migrate(Connection& connection, std::span<const Migration> migrations) {
  checkList(connection, migrations);
  for (const Migration& migration : migrations) {
    if (userVersion(connection) >= migration.version) continue;  // no write lock when current
    Transaction transaction(connection, Transaction::Kind::Immediate);
    const std::int64_t version = userVersion(connection);  // another connection may have won
    if (version >= migration.version) continue;
    const std::string what = "applying schema migration " + std::to_string(migration.version) +
                             " (" + std::string(migration.summary) + ")";
    if (version != migration.version - 1) {
      connection.failPlain(what + ": found version " + std::to_string(version));
    }
    connection.exec(migration.sql, what);
    // The version is our own constant, not a value from outside; PRAGMA takes no parameters.
    connection.exec("PRAGMA user_version = " + std::to_string(migration.version), what);
    transaction.commit();
  }
  checkSchemaCompatible(connection, migrations);
}

}  // namespace crucible::store
