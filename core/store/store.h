#pragma once
// Crucible's store: one SQLite file that keeps every session (DESIGN.md, "Storage"). Schema and
// its versions: migrations.cpp.
//
// Threads: a Store owns one SQLite connection and must not be shared between threads. Each thread
// that needs the store opens its own Store on the same file; WAL mode and a 5 s busy timeout let
// them read and write side by side. Never use a Store on a UI thread.
//
// Every write is one transaction: it lands completely or not at all. Errors are StoreError, whose
// message names the file and gives SQLite's reason.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/error.h"
#include "core/store/sqlite.h"
#include "core/verify/evaluation.h"
#include "core/verify/verdict.h"

namespace crucible::store {

inline constexpr std::string_view kSessionKindVerify = "verify";
/// A session of the desktop workbench: one task, any number of candidates added over time.
inline constexpr std::string_view kSessionKindWorkbench = "workbench";
/// A `crucible generate` run: candidates added one by one as they are verified.
inline constexpr std::string_view kSessionKindGenerate = "generate";

/// The reference program a candidate is for. Tasks are deduplicated by the SHA-256 of `source`.
struct TaskInput {
  std::string name;    // e.g. the file's stem, "23_Softmax"
  std::string path;    // where it was read from; may be empty
  std::string source;  // the whole file
};

/// A candidate as it arrived.
struct CandidateInput {
  std::string origin = "file";  // "file" | "response" | ...
  std::string model;            // the model that wrote it, when generated
  std::string prompt;
  std::string rawResponse;
  std::string plan;                      // text before the code in a model response
  std::string code;                      // the candidate program
  std::string path;                      // file it was read from, when any
  std::optional<std::int64_t> parentId;  // the candidate it refines, when any
};

/// Everything `crucible verify` saves about one run.
struct VerificationRecord {
  TaskInput task;
  CandidateInput candidate;
  Evaluation evaluation;
  std::string note;  // the session's note; may be empty
};

struct SavedIds {
  std::int64_t taskId = 0;
  std::int64_t sessionId = 0;
  std::int64_t candidateId = 0;
  std::int64_t evaluationId = 0;
  bool operator==(const SavedIds&) const = default;
};

struct SessionFilter {
  std::string taskText;  // case-insensitive (ASCII) substring of task name or path; "" = all
  std::optional<Verdict> verdict;  // the session's verdict (see SessionSummary); nullopt = all
  int limit = 0;                   // at most this many; 0 = no limit
  std::string modelText;           // case-insensitive substring of any candidate's model or origin
  std::string since;               // created_at >= since (ISO-8601 prefix, "2026-01-31"); "" = any
  std::string until;               // created_at < until; "" = any
};

/// One line of the session list. A session's verdict, speedup and flag count are those of its best
/// evaluation: the best verdict (verified, incorrect, cheating, invalid, error, in that order),
/// then the highest speedup, then the earliest. For a verify session that is its only evaluation.
struct SessionSummary {
  std::int64_t id = 0;
  std::string createdAt;  // ISO-8601 UTC
  std::string kind;
  std::string note;
  std::int64_t taskId = 0;
  std::string taskName;
  int candidateCount = 0;
  std::optional<Verdict> verdict;  // nullopt when nothing was evaluated
  std::optional<double> speedup;
  int flagCount = 0;
  bool operator==(const SessionSummary&) const = default;
};

struct TaskRecord {
  std::int64_t id = 0;
  std::string name;
  std::string path;
  std::string source;
  std::string sha256;
  std::string createdAt;
  bool operator==(const TaskRecord&) const = default;
};

struct EvaluationRecord {
  std::int64_t id = 0;
  std::string createdAt;
  Evaluation evaluation;  // rebuilt from the stored report: equal to the one saved
  bool operator==(const EvaluationRecord&) const = default;
};

struct CandidateRecord {
  std::int64_t id = 0;
  std::string origin;
  std::string model;
  std::string prompt;
  std::string rawResponse;
  std::string plan;
  std::string code;
  std::string path;
  std::optional<std::int64_t> parentId;
  std::string sha256;
  std::string createdAt;
  std::vector<EvaluationRecord> evaluations;  // oldest first
  bool operator==(const CandidateRecord&) const = default;
};

/// A session as it was saved.
struct SessionDetail {
  std::int64_t id = 0;
  std::string kind;
  std::string createdAt;
  std::string note;
  TaskRecord task;
  std::vector<CandidateRecord> candidates;  // in the order they were added
  bool operator==(const SessionDetail&) const = default;
};

class Store {
 public:
  /// $XDG_DATA_HOME/crucible/crucible.db, else $HOME/.local/share/crucible/crucible.db.
  /// Throws StoreError when neither variable gives an absolute path.
  static std::string defaultDatabasePath();

  /// Opens the file, creating it and its folder when missing, and brings its schema up to date
  /// (WAL journal, foreign keys on, 5 s busy timeout). Refuses with StoreError, without changing
  /// the file, one that is not a Crucible database or whose schema is newer than this build's.
  explicit Store(const std::string& path);

  Store(Store&&) noexcept = default;
  Store& operator=(Store&&) noexcept = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return connection_.path(); }
  int schemaVersion();

  /// Saves one verification in one transaction: finds or adds the task (by the SHA-256 of its
  /// source), adds a 'verify' session, the candidate, the evaluation, its flags and reward
  /// components. On any failure nothing is saved and StoreError is thrown.
  SavedIds recordVerification(const VerificationRecord& record);

  /// Starts a session of `kind` on a task (found or added by the SHA-256 of its source), for
  /// callers that add candidates and evaluations one at a time (the desktop workbench). Returns
  /// the task and session ids. Each of these three writes is its own transaction.
  SavedIds startSession(const TaskInput& task, std::string_view kind, const std::string& note = {});
  /// Adds a candidate to session `sessionId`; returns its id. StoreError when there is no such
  /// session, or when the candidate's parent is not a candidate of the same session.
  std::int64_t addCandidateTo(std::int64_t sessionId, const CandidateInput& candidate);
  /// Adds an evaluation of candidate `candidateId` with its flags and reward components.
  std::int64_t addEvaluationTo(std::int64_t candidateId, const Evaluation& evaluation);
  /// Records that candidate `candidateId` was exported to `path`.
  void recordExport(std::int64_t candidateId, const std::string& path);

  /// Sessions, newest first.
  std::vector<SessionSummary> listSessions(const SessionFilter& filter = {});

  /// A whole session, or nullopt when there is no session `id`.
  std::optional<SessionDetail> session(std::int64_t id);

 private:
  std::int64_t findOrAddTask(const TaskInput& task, const std::string& now);
  std::int64_t addSession(std::int64_t taskId, std::string_view kind, const std::string& note,
                          const std::string& now);
  std::int64_t addCandidate(std::int64_t sessionId, std::int64_t taskId,
                            const CandidateInput& candidate, const std::string& now);
  std::int64_t addEvaluation(std::int64_t candidateId, const Evaluation& evaluation,
                             const std::string& now);

  Connection connection_;
};

/// The current time as the store writes it: ISO-8601 UTC with milliseconds.
std::string utcTimestamp();

// JSON forms, for `crucible sessions ... --json` and anything else that exports records.
// Evaluations appear in their own JSON form (evaluation.h) under "evaluation".
void to_json(nlohmann::json& j, const SessionSummary& summary);
void to_json(nlohmann::json& j, const TaskRecord& task);
void to_json(nlohmann::json& j, const EvaluationRecord& evaluation);
void to_json(nlohmann::json& j, const CandidateRecord& candidate);
void to_json(nlohmann::json& j, const SessionDetail& session);

}  // namespace crucible::store
