// The SQLite store: schema migrations, refusals that leave files alone, exact round trips,
// transactions, listing and concurrent writers; tasks are keyed by their SHA-256 (test_sha256.cpp).
// Real files in a temporary folder; a raw SQLite connection looks underneath the Store where a test
// needs it.

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/store/migrations.h"
#include "core/store/sqlite.h"
#include "core/store/store.h"
#include "core/util/sha256.h"

namespace crucible::store {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// --- helpers ----------------------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "crucible-store-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string readBytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A raw connection for looking underneath the Store. Table names come from the tests themselves.
class Raw {
 public:
  explicit Raw(const fs::path& file) {
    if (sqlite3_open(file.c_str(), &db_) != SQLITE_OK) throw std::runtime_error("open failed");
    sqlite3_busy_timeout(db_, 5000);
  }
  ~Raw() { sqlite3_close(db_); }
  std::int64_t integer(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      throw std::runtime_error(sqlite3_errmsg(db_));
    }
    std::int64_t value = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
    sqlite3_finalize(stmt);
    return value;
  }
  std::string text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      throw std::runtime_error(sqlite3_errmsg(db_));
    }
    std::string value;
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return value;
  }
  void exec(const std::string& sql) {
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      throw std::runtime_error(sqlite3_errmsg(db_));
    }
  }
  std::int64_t count(const std::string& table) { return integer("SELECT count(*) FROM " + table); }

 private:
  sqlite3* db_ = nullptr;
};

Evaluation sampleEvaluation() {
  Evaluation e;
  e.verdict = Verdict::Verified;
  e.correct = true;
  e.speedup = 1.8512345678901234;
  e.timing = Timing{0.1234567890123, 0.0666, 0.09};
  e.flags.push_back(makeFlag("precision_downgrade", "computes in float16", 12,
                             json{{"dtype", "float16"}, {"ops", json::array({"dot", 3, 2.5})}}));
  e.flags.push_back(makeFlag("nondeterministic_output", "runs differ by 1e-3"));
  e.reward.preset = "tritonrl";
  e.reward.total = 0.95;
  e.reward.components = {{"valid", 1.0, ""}, {"r_correct", 1.0, "code"}, {"r_speed", 1.85, "plan"}};
  e.backend = "cuda";
  e.device = "NVIDIA H100 80GB HBM3";
  e.sandboxed = true;
  e.correctness = json{{"trials", 5}, {"max_abs_error", 1.2e-7}};
  e.environment = json{{"python", "3.11.2"}, {"torch", "2.5.1"}, {"triton", "3.1.0"}};
  e.facts = json{{"static", {{"kernels", json::array({{{"name", "k"}, {"line", 8}}})}}},
                 {"numbers", json::array({1, -2, 2.5, 1e300, "ünïcødé ✓"})}};
  e.plan = "fuse the softmax into one row-wise kernel";
  return e;
}

Evaluation errorEvaluation() {
  Evaluation e;
  e.verdict = Verdict::Error;
  e.backend = "opencl";
  e.device = "pthread-cpu";
  e.error = EvalError{"infrastructure", "worker could not start", "infrastructure", std::nullopt};
  e.reward.preset = "kevin";
  e.reward.total = std::nullopt;
  e.sandboxNote = "bubblewrap not found";
  return e;
}

VerificationRecord sampleRecord(const std::string& taskName, const std::string& source,
                                Evaluation evaluation = sampleEvaluation()) {
  VerificationRecord r;
  r.task = TaskInput{taskName, "/tasks/" + taskName + ".py", source};
  r.candidate.origin = "response";
  r.candidate.model = "qwen3-8b";
  r.candidate.prompt = "Write ModelNew with Triton.";
  r.candidate.rawResponse = "Plan...\n```python\nclass ModelNew: pass\n```";
  r.candidate.plan = "Plan...";
  r.candidate.code = "import triton\nclass ModelNew: pass\n# " + taskName + "\n";
  r.candidate.path = "/tmp/candidate.py";
  r.evaluation = std::move(evaluation);
  r.note = "note for " + taskName;
  return r;
}

SessionFilter filter(std::string text, std::optional<Verdict> verdict = std::nullopt,
                     int limit = 0) {
  SessionFilter f;
  f.taskText = std::move(text);
  f.verdict = verdict;
  f.limit = limit;
  return f;
}

class StoreTest : public ::testing::Test {
 protected:
  fs::path dbPath() const { return dir_.path() / "data" / "crucible.db"; }
  TempDir dir_;
};

// --- opening and migrations -------------------------------------------------------------------

TEST_F(StoreTest, MigratesAnEmptyFileAndCreatesItsFolder) {
  ASSERT_FALSE(fs::exists(dbPath().parent_path()));
  {
    Store store(dbPath().string());
    EXPECT_EQ(store.path(), dbPath().string());
    EXPECT_EQ(store.schemaVersion(), latestSchemaVersion());
    EXPECT_TRUE(store.listSessions().empty());
  }
  ASSERT_TRUE(fs::exists(dbPath()));
  Raw raw(dbPath());
  EXPECT_EQ(raw.integer("PRAGMA user_version"), latestSchemaVersion());
  EXPECT_EQ(raw.integer("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
  for (const char* table : {"tasks", "sessions", "candidates", "evaluations", "flags",
                            "reward_components", "exports"}) {
    EXPECT_EQ(raw.integer(std::string("SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                      "AND name = '") +
                          table + "'"),
              1)
        << table;
  }
}

TEST_F(StoreTest, ReopensAnExistingDatabase) {
  SavedIds ids;
  {
    Store store(dbPath().string());
    ids = store.recordVerification(sampleRecord("softmax", "class Model: softmax"));
  }
  Store again(dbPath().string());
  EXPECT_EQ(again.schemaVersion(), latestSchemaVersion());
  auto sessions = again.listSessions();
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].id, ids.sessionId);
  auto detail = again.session(ids.sessionId);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->candidates.at(0).evaluations.at(0).evaluation, sampleEvaluation());
}

TEST_F(StoreTest, RefusesANewerSchemaWithoutChangingTheFile) {
  { Store store(dbPath().string()); }
  {
    Raw raw(dbPath());
    raw.exec("PRAGMA user_version = " + std::to_string(latestSchemaVersion() + 1));
  }
  const std::string before = readBytes(dbPath());
  try {
    Store store(dbPath().string());
    FAIL() << "a newer schema was accepted";
  } catch (const StoreError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(dbPath().string()), std::string::npos) << message;
    EXPECT_NE(message.find("newer"), std::string::npos) << message;
  }
  EXPECT_EQ(readBytes(dbPath()), before);
  Raw raw(dbPath());
  EXPECT_EQ(raw.integer("PRAGMA user_version"), latestSchemaVersion() + 1);
}

TEST_F(StoreTest, RefusesAnotherProgramsDatabase) {
  fs::create_directories(dbPath().parent_path());
  {
    Raw raw(dbPath());
    raw.exec("CREATE TABLE bookmarks (url TEXT)");
  }
  const std::string before = readBytes(dbPath());
  try {
    Store store(dbPath().string());
    FAIL() << "another program's database was accepted";
  } catch (const StoreError& error) {
    EXPECT_NE(std::string(error.what()).find("not a Crucible database"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(readBytes(dbPath()), before);
}

TEST_F(StoreTest, CorruptFileIsAStoreErrorNamingTheFile) {
  fs::create_directories(dbPath().parent_path());
  {
    std::mt19937 random(1234);
    std::ofstream out(dbPath(), std::ios::binary);
    for (int i = 0; i < 8192; ++i) out.put(static_cast<char>(random() & 0xff));
  }
  const std::string before = readBytes(dbPath());
  try {
    Store store(dbPath().string());
    FAIL() << "random bytes opened as a database";
  } catch (const StoreError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(dbPath().string()), std::string::npos) << message;
    EXPECT_NE(message.find("not a database"), std::string::npos) << message;
  }
  EXPECT_EQ(readBytes(dbPath()), before);
}

TEST_F(StoreTest, ReadOnlyFileIsRefusedClearly) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes to read-only files";
  { Store store(dbPath().string()); }
  fs::permissions(dbPath(), fs::perms::owner_read | fs::perms::group_read);
  try {
    Store store(dbPath().string());
    FAIL() << "a read-only file was opened for writing";
  } catch (const StoreError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(dbPath().string()), std::string::npos) << message;
    EXPECT_NE(message.find("read-only"), std::string::npos) << message;
  }
}

TEST_F(StoreTest, AFolderThatCannotBeMadeIsAStoreError) {
  fs::create_directories(dir_.path());
  std::ofstream(dir_.path() / "file") << "x";
  EXPECT_THROW(Store((dir_.path() / "file" / "sub" / "crucible.db").string()), StoreError);
}

TEST_F(StoreTest, ANewMigrationIsOneMoreEntryAndAFailedOneRollsBack) {
  { Store store(dbPath().string()); }
  std::vector<Migration> migrations(schemaMigrations().begin(), schemaMigrations().end());
  const int next = latestSchemaVersion() + 1;
  migrations.push_back({next, "an extra table", "CREATE TABLE extra (x INTEGER);"});
  {
    Connection connection(dbPath().string(), 5000);
    checkSchemaCompatible(connection, migrations);
    migrate(connection, migrations);
    EXPECT_EQ(connection.queryInt("PRAGMA user_version", "test"), next);
    migrate(connection, migrations);  // already current: nothing to do
  }
  // A migration that fails half-way leaves neither its first table nor a new version behind.
  migrations.push_back({next + 1, "broken", "CREATE TABLE good (x); CREATE TABLE tasks (x);"});
  {
    Connection connection(dbPath().string(), 5000);
    try {
      migrate(connection, migrations);
      FAIL() << "a broken migration succeeded";
    } catch (const StoreError& error) {
      EXPECT_NE(std::string(error.what()).find("broken"), std::string::npos) << error.what();
    }
  }
  Raw raw(dbPath());
  EXPECT_EQ(raw.integer("PRAGMA user_version"), next);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE name = 'good'"), 0);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE name = 'extra'"), 1);
  // And this build, which knows one version less, refuses the result.
  EXPECT_THROW(Store(dbPath().string()), StoreError);
}

TEST(StoreDefaultPath, FollowsXdgDataHomeThenHome) {
  const auto saved = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  const auto restore = [](const char* name, const std::optional<std::string>& value) {
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  };
  const auto xdg = saved("XDG_DATA_HOME");
  const auto home = saved("HOME");

  setenv("XDG_DATA_HOME", "/data/home", 1);
  setenv("HOME", "/home/kim", 1);
  EXPECT_EQ(Store::defaultDatabasePath(), "/data/home/crucible/crucible.db");
  setenv("XDG_DATA_HOME", "relative/ignored", 1);
  EXPECT_EQ(Store::defaultDatabasePath(), "/home/kim/.local/share/crucible/crucible.db");
  unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(Store::defaultDatabasePath(), "/home/kim/.local/share/crucible/crucible.db");
  unsetenv("HOME");
  EXPECT_THROW(Store::defaultDatabasePath(), StoreError);

  restore("XDG_DATA_HOME", xdg);
  restore("HOME", home);
}

// --- saving and reading -----------------------------------------------------------------------

TEST_F(StoreTest, RecordVerificationRoundTripsExactly) {
  Store store(dbPath().string());
  const VerificationRecord record = sampleRecord("23_Softmax", "class Model:\n  softmax\n");
  const SavedIds ids = store.recordVerification(record);
  EXPECT_GT(ids.taskId, 0);
  EXPECT_GT(ids.sessionId, 0);
  EXPECT_GT(ids.candidateId, 0);
  EXPECT_GT(ids.evaluationId, 0);

  const auto detail = store.session(ids.sessionId);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->id, ids.sessionId);
  EXPECT_EQ(detail->kind, "verify");
  EXPECT_EQ(detail->note, record.note);
  EXPECT_EQ(detail->createdAt.size(), 24u) << detail->createdAt;  // 2026-01-31T12:34:56.789Z
  EXPECT_EQ(detail->createdAt.back(), 'Z');
  EXPECT_EQ(detail->task.id, ids.taskId);
  EXPECT_EQ(detail->task.name, record.task.name);
  EXPECT_EQ(detail->task.path, record.task.path);
  EXPECT_EQ(detail->task.source, record.task.source);
  EXPECT_EQ(detail->task.sha256, util::sha256Hex(record.task.source));

  ASSERT_EQ(detail->candidates.size(), 1u);
  const CandidateRecord& c = detail->candidates[0];
  EXPECT_EQ(c.id, ids.candidateId);
  EXPECT_EQ(c.origin, record.candidate.origin);
  EXPECT_EQ(c.model, record.candidate.model);
  EXPECT_EQ(c.prompt, record.candidate.prompt);
  EXPECT_EQ(c.rawResponse, record.candidate.rawResponse);
  EXPECT_EQ(c.plan, record.candidate.plan);
  EXPECT_EQ(c.code, record.candidate.code);
  EXPECT_EQ(c.path, record.candidate.path);
  EXPECT_EQ(c.parentId, std::nullopt);
  EXPECT_EQ(c.sha256, util::sha256Hex(record.candidate.code));
  ASSERT_EQ(c.evaluations.size(), 1u);
  EXPECT_EQ(c.evaluations[0].id, ids.evaluationId);
  EXPECT_EQ(c.evaluations[0].evaluation, record.evaluation);

  // The queryable columns agree with the value.
  Raw raw(dbPath());
  const std::string where = " WHERE evaluation_id = " + std::to_string(ids.evaluationId);
  EXPECT_EQ(raw.count("flags" + where), 2);
  EXPECT_EQ(raw.integer("SELECT line FROM flags" + where + " AND flag_id = 'precision_downgrade'"),
            12);
  EXPECT_EQ(raw.count("reward_components" + where), 3);
  EXPECT_EQ(raw.text("SELECT name FROM reward_components" + where + " AND position = 2"),
            "r_speed");
  EXPECT_EQ(raw.text("SELECT verdict FROM evaluations"), "verified");
  EXPECT_EQ(raw.text("SELECT backend FROM evaluations"), "cuda");
  EXPECT_EQ(raw.integer("SELECT sandboxed FROM evaluations"), 1);
  EXPECT_EQ(json::parse(raw.text("SELECT environment_json FROM evaluations")),
            record.evaluation.environment);
}

TEST_F(StoreTest, AnErrorEvaluationRoundTripsWithItsNulls) {
  Store store(dbPath().string());
  const VerificationRecord record =
      sampleRecord("broken", "class Model: broken", errorEvaluation());
  const SavedIds ids = store.recordVerification(record);
  const auto detail = store.session(ids.sessionId);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->candidates.at(0).evaluations.at(0).evaluation, record.evaluation);
  Raw raw(dbPath());
  EXPECT_EQ(raw.integer("SELECT reward_total IS NULL AND speedup IS NULL FROM evaluations"), 1);
  EXPECT_EQ(raw.text("SELECT error_blame FROM evaluations"), "infrastructure");
}

TEST_F(StoreTest, UnknownSessionIsNullopt) {
  Store store(dbPath().string());
  EXPECT_FALSE(store.session(42).has_value());
}

TEST_F(StoreTest, TasksAreDeduplicatedBySourceHash) {
  Store store(dbPath().string());
  const SavedIds first = store.recordVerification(sampleRecord("softmax", "same source"));
  VerificationRecord renamed = sampleRecord("softmax_copy", "same source");
  const SavedIds second = store.recordVerification(renamed);
  const SavedIds other = store.recordVerification(sampleRecord("gelu", "other source"));
  EXPECT_EQ(first.taskId, second.taskId);
  EXPECT_NE(first.sessionId, second.sessionId);
  EXPECT_NE(first.taskId, other.taskId);
  Raw raw(dbPath());
  EXPECT_EQ(raw.count("tasks"), 2);
  EXPECT_EQ(raw.count("sessions"), 3);
  // The task keeps the name it was first saved under.
  EXPECT_EQ(store.session(second.sessionId)->task.name, "softmax");
}

TEST_F(StoreTest, AFailedRecordRollsBackCompletely) {
  Store store(dbPath().string());
  VerificationRecord bad = sampleRecord("orphan", "a task never seen before");
  bad.candidate.parentId = 987654;  // no such candidate: the foreign key refuses it
  try {
    store.recordVerification(bad);
    FAIL() << "a dangling parent id was saved";
  } catch (const StoreError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("FOREIGN KEY"), std::string::npos) << message;
    EXPECT_NE(message.find(dbPath().string()), std::string::npos) << message;
  }
  {
    Raw raw(dbPath());
    for (const char* table :
         {"tasks", "sessions", "candidates", "evaluations", "flags", "reward_components"}) {
      EXPECT_EQ(raw.count(table), 0) << table;
    }
  }
  // The store is still usable, and a real parent is accepted.
  const SavedIds parent = store.recordVerification(sampleRecord("orphan", "a task"));
  VerificationRecord child = sampleRecord("orphan", "a task");
  child.candidate.parentId = parent.candidateId;
  const SavedIds ids = store.recordVerification(child);
  EXPECT_EQ(store.session(ids.sessionId)->candidates.at(0).parentId, parent.candidateId);
}

TEST_F(StoreTest, ListSessionsNewestFirstWithFilters) {
  Store store(dbPath().string());
  Evaluation incorrect = sampleEvaluation();
  incorrect.verdict = Verdict::Incorrect;
  incorrect.correct = false;
  incorrect.speedup = std::nullopt;
  incorrect.flags.clear();
  Evaluation cheating = sampleEvaluation();
  cheating.verdict = Verdict::Cheating;
  cheating.flags = {makeFlag("torch_compute_in_forward", "torch.softmax in forward", 30)};

  const SavedIds a = store.recordVerification(sampleRecord("23_Softmax", "softmax"));
  const SavedIds b = store.recordVerification(sampleRecord("26_GELU", "gelu", incorrect));
  const SavedIds c = store.recordVerification(sampleRecord("softmax_online", "online", cheating));
  const SavedIds d = store.recordVerification(sampleRecord("Matmul", "matmul", errorEvaluation()));

  const auto ids = [](const std::vector<SessionSummary>& list) {
    std::vector<std::int64_t> out;
    for (const auto& s : list) out.push_back(s.id);
    return out;
  };
  const auto all = store.listSessions();
  EXPECT_EQ(ids(all),
            (std::vector<std::int64_t>{d.sessionId, c.sessionId, b.sessionId, a.sessionId}));
  const SessionSummary& first = all.back();
  EXPECT_EQ(first.taskName, "23_Softmax");
  EXPECT_EQ(first.kind, "verify");
  EXPECT_EQ(first.candidateCount, 1);
  EXPECT_EQ(first.verdict, Verdict::Verified);
  EXPECT_EQ(first.speedup, sampleEvaluation().speedup);
  EXPECT_EQ(first.flagCount, 2);
  EXPECT_EQ(first.taskId, a.taskId);
  EXPECT_EQ(all[1].verdict, Verdict::Cheating);
  EXPECT_EQ(all[1].flagCount, 1);
  EXPECT_EQ(all[0].verdict, Verdict::Error);
  EXPECT_EQ(all[0].speedup, std::nullopt);

  EXPECT_EQ(ids(store.listSessions(filter("SOFTMAX"))),
            (std::vector<std::int64_t>{c.sessionId, a.sessionId}));
  EXPECT_EQ(ids(store.listSessions(filter("/tasks/26_"))),  // matches the path too
            (std::vector<std::int64_t>{b.sessionId}));
  EXPECT_EQ(ids(store.listSessions(filter("", Verdict::Incorrect))),
            (std::vector<std::int64_t>{b.sessionId}));
  EXPECT_EQ(ids(store.listSessions(filter("softmax", Verdict::Verified))),
            (std::vector<std::int64_t>{a.sessionId}));
  EXPECT_EQ(ids(store.listSessions(filter("", std::nullopt, 2))),
            (std::vector<std::int64_t>{d.sessionId, c.sessionId}));
  EXPECT_TRUE(store.listSessions(filter("nothing like it")).empty());
  EXPECT_TRUE(store.listSessions(filter("", Verdict::Invalid)).empty());
  // Text that looks like SQL or a LIKE pattern is just text.
  EXPECT_TRUE(store.listSessions(filter("%' OR 1=1 --")).empty());
  EXPECT_TRUE(store.listSessions(filter("_")).size() == 3u);
}

TEST_F(StoreTest, TwoThreadsWriteTheSameFileThroughTheirOwnStores) {
  constexpr int kPerThread = 25;
  std::atomic<int> ready{0};
  std::atomic<int> failures{0};
  std::vector<std::string> errors(2);
  const auto writer = [&](int which) {
    try {
      ready.fetch_add(1);
      while (ready.load() < 2) std::this_thread::yield();
      Store store(dbPath().string());  // both open and migrate a new file at once
      for (int i = 0; i < kPerThread; ++i) {
        store.recordVerification(
            sampleRecord("task" + std::to_string(which), "source " + std::to_string(which)));
        store.listSessions(filter("", std::nullopt, 5));
      }
    } catch (const std::exception& error) {
      errors[which] = error.what();
      failures.fetch_add(1);
    }
  };
  std::thread first(writer, 0);
  std::thread second(writer, 1);
  first.join();
  second.join();
  EXPECT_EQ(failures.load(), 0) << errors[0] << " | " << errors[1];
  Store store(dbPath().string());
  EXPECT_EQ(store.listSessions().size(), 2u * kPerThread);
  EXPECT_EQ(store.listSessions(filter("task1")).size(), 1u * kPerThread);
  Raw raw(dbPath());
  EXPECT_EQ(raw.count("tasks"), 2);
}

TEST_F(StoreTest, SessionJsonCarriesTheEvaluationJson) {
  Store store(dbPath().string());
  const SavedIds ids = store.recordVerification(sampleRecord("softmax", "softmax"));
  const json session = *store.session(ids.sessionId);
  EXPECT_EQ(session.at("id"), ids.sessionId);
  EXPECT_EQ(session.at("task").at("name"), "softmax");
  const json& evaluation = session.at("candidates").at(0).at("evaluations").at(0);
  EXPECT_EQ(evaluation.at("evaluation").get<Evaluation>(), sampleEvaluation());
  const json summary = store.listSessions().at(0);
  EXPECT_EQ(summary.at("verdict"), "verified");
  EXPECT_EQ(summary.at("flags"), 2);
}

// --- incremental sessions (generation) ----------------------------------------------------------

TEST_F(StoreTest, AGenerateSessionGrowsOneCandidateAtATime) {
  Store store(dbPath().string());
  const SavedIds ids = store.startSession(TaskInput{"relu", "/tasks/relu.py", "class Model: relu"},
                                          kSessionKindGenerate, "best-of-n, n=2");
  EXPECT_GT(ids.taskId, 0);
  auto detail = store.session(ids.sessionId);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->kind, "generate");
  EXPECT_EQ(detail->note, "best-of-n, n=2");
  EXPECT_TRUE(detail->candidates.empty());

  CandidateInput first;
  first.origin = "endpoint";
  first.model = "qwen3-8b";
  first.prompt = "<|user|>\nwrite relu";
  first.rawResponse = "<think>mask the tail</think>\n```python\nclass ModelNew: pass\n```";
  first.plan = "mask the tail";
  first.code = "class ModelNew: pass\n";
  const std::int64_t firstId = store.addCandidateTo(ids.sessionId, first);
  // Stored before it is evaluated: an interruption here keeps the candidate.
  detail = store.session(ids.sessionId);
  ASSERT_EQ(detail->candidates.size(), 1u);
  EXPECT_TRUE(detail->candidates[0].evaluations.empty());
  EXPECT_EQ(detail->candidates[0].rawResponse, first.rawResponse);

  const std::int64_t evaluationId = store.addEvaluationTo(firstId, sampleEvaluation());
  CandidateInput refined = first;
  refined.code = "class ModelNew: faster\n";
  refined.parentId = firstId;
  const std::int64_t refinedId = store.addCandidateTo(ids.sessionId, refined);
  store.addEvaluationTo(refinedId, errorEvaluation());

  detail = store.session(ids.sessionId);
  ASSERT_EQ(detail->candidates.size(), 2u);
  EXPECT_EQ(detail->candidates[0].evaluations.at(0).id, evaluationId);
  EXPECT_EQ(detail->candidates[0].evaluations.at(0).evaluation, sampleEvaluation());
  EXPECT_EQ(detail->candidates[1].id, refinedId);
  EXPECT_EQ(detail->candidates[1].parentId, firstId);
  EXPECT_EQ(detail->candidates[1].origin, "endpoint");
  EXPECT_EQ(detail->candidates[1].plan, "mask the tail");
  // The session's summary is its best evaluation.
  const SessionSummary summary = store.listSessions().at(0);
  EXPECT_EQ(summary.kind, "generate");
  EXPECT_EQ(summary.candidateCount, 2);
  EXPECT_EQ(summary.verdict, Verdict::Verified);
}

TEST_F(StoreTest, IncrementalWritesRefuseStrangersAndKeepWhatWasAdded) {
  Store store(dbPath().string());
  const SavedIds a = store.startSession(TaskInput{"a", "", "source a"}, kSessionKindGenerate);
  const SavedIds b = store.startSession(TaskInput{"b", "", "source b"}, kSessionKindGenerate);
  CandidateInput c;
  c.origin = "endpoint";
  c.code = "x";
  const std::int64_t inA = store.addCandidateTo(a.sessionId, c);

  EXPECT_THROW(store.addCandidateTo(999, c), StoreError);
  CandidateInput crossing = c;
  crossing.parentId = inA;  // a parent from another session is refused
  try {
    store.addCandidateTo(b.sessionId, crossing);
    FAIL() << "a parent from another session was accepted";
  } catch (const StoreError& error) {
    EXPECT_NE(std::string(error.what()).find("not in session"), std::string::npos);
  }
  EXPECT_THROW(store.addEvaluationTo(12345, sampleEvaluation()), StoreError);  // no such candidate

  Raw raw(dbPath());
  EXPECT_EQ(raw.count("candidates"), 1);
  EXPECT_EQ(raw.count("evaluations"), 0);
  EXPECT_EQ(raw.integer("SELECT session_id FROM candidates"), a.sessionId);
  EXPECT_EQ(raw.integer("SELECT task_id FROM candidates"), a.taskId);
}

}  // namespace
}  // namespace crucible::store
