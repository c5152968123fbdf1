// The CLI's contract, through the real binary: the --json keys the issue fixes, exit codes, the
// database, and `sessions list/show`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test::CliRun;
using test::runCli;

class CliContract : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("crucible-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::string example =
        std::string(CRUCIBLE_TEST_SOURCE_DIR) + "/resources/examples/row_softmax/";
    verified_ = new CliRun(runCli({"verify", example + "reference.py", example + "candidate.py",
                                   "--json", "--no-compile-baseline", "--reps", "3", "--reward",
                                   "drtriton", "--trials", "5", "--db", db()}));
  }
  static void TearDownTestSuite() {
    delete verified_;
    fs::remove_all(dir_);
  }
  static std::string db() { return (dir_ / "cli.db").string(); }
  static std::string example(const std::string& file) {
    return std::string(CRUCIBLE_TEST_SOURCE_DIR) + "/resources/examples/row_softmax/" + file;
  }

  static inline fs::path dir_;
  static inline CliRun* verified_ = nullptr;
};

TEST_F(CliContract, JsonHasEveryRequiredKey) {
  ASSERT_EQ(verified_->exitCode, 0) << verified_->err;
  const json j = json::parse(verified_->out);
  EXPECT_EQ(j["verdict"], "verified");
  EXPECT_EQ(j["correct"], true);
  EXPECT_TRUE(j["speedup"].is_number());
  for (const char* key : {"reference_ms", "candidate_ms", "compile_reference_ms"}) {
    EXPECT_TRUE(j["timing"].contains(key)) << key;
  }
  EXPECT_TRUE(j["timing"]["compile_reference_ms"].is_null());  // --no-compile-baseline
  EXPECT_TRUE(j["flags"].is_array());
  EXPECT_EQ(j["reward"]["preset"], "drtriton");
  EXPECT_TRUE(j["reward"]["total"].is_number());
  EXPECT_TRUE(j["reward"]["components"].is_object());
  // The default backend is auto, reported as what it resolved to on this machine.
  const std::string backend = j["backend"];
  EXPECT_TRUE(backend == "opencl" || backend == "interpret" || backend == "cuda") << backend;
  EXPECT_TRUE(j["device"].is_string());
  EXPECT_TRUE(j["error"].is_null());
}

TEST_F(CliContract, JsonSaysWhereTheTimeWent) {
  ASSERT_EQ(verified_->exitCode, 0) << verified_->err;
  const json j = json::parse(verified_->out);
  std::map<std::string, double> seconds;
  for (const auto& t : j.at("stage_seconds")) seconds[t.at("stage")] = t.at("seconds");
  for (const char* stage : {"static", "reference", "candidate", "compare", "candidate/startup",
                            "candidate/candidate-trials", "candidate/candidate-timing"}) {
    ASSERT_TRUE(seconds.contains(stage)) << stage << " in " << j["stage_seconds"].dump();
    EXPECT_GE(seconds[stage], 0) << stage;
  }
  // A stage's phases tile it: together they are the stage's time, give or take the clock reads.
  double phases = 0;
  for (const auto& [name, s] : seconds) {
    if (name.starts_with("candidate/")) phases += s;
  }
  EXPECT_NEAR(phases, seconds["candidate"], 0.05);
  EXPECT_GT(seconds["candidate"], 0.1);  // a Python process importing torch
}

TEST_F(CliContract, StagesTakeTheDeviceLockWhereItIsOn) {
  // By default only cuda stages lock the device; the CPU backends' stages say they had none.
  ASSERT_EQ(verified_->exitCode, 0) << verified_->err;
  const json j = json::parse(verified_->out);
  if (j["backend"] != "cuda") {
    EXPECT_EQ(j["facts"]["candidate"]["device_lock"]["state"], "no lock was given");
  }
  // Switched on, the reference and the candidate (each in its sandbox) hold it to time.
  const std::string example =
      std::string(CRUCIBLE_TEST_SOURCE_DIR) + "/resources/examples/silu_residual/";
  auto locked =
      runCli({"verify", example + "reference.py", example + "candidate.py", "--json",
              "--no-compile-baseline", "--reps", "3", "--trials", "2", "--backend", "interpret"},
             {{"CRUCIBLE_DEVICE_LOCK", "on"}});
  ASSERT_EQ(locked.exitCode, 0) << locked.err;
  const json facts = json::parse(locked.out)["facts"];
  for (const char* stage : {"reference", "baseline", "candidate"}) {
    const json& lock = facts[stage]["device_lock"];
    EXPECT_EQ(lock["state"], "held") << stage << ": " << lock.dump();
    EXPECT_GE(lock["exclusive_wait_s"].get<double>(), 0) << stage;
  }
  EXPECT_TRUE(facts["candidate"]["device_lock"].contains("shared_wait_s"));
}

TEST_F(CliContract, BothSidesAreTimedOnTheSameThreadsAndTheSpeedupCarriesItsSpread) {
  ASSERT_EQ(verified_->exitCode, 0) << verified_->err;
  const json j = json::parse(verified_->out);
  // One CPU thread each by default, reported by both stages and in the result.
  EXPECT_EQ(j["timing"]["threads"], 1) << j["timing"].dump();
  EXPECT_EQ(j["facts"]["reference"]["timing"]["threads"], 1);
  EXPECT_EQ(j["facts"]["candidate"]["timing"]["threads"], 1);
  ASSERT_TRUE(j["speedup"].is_number()) << j.dump().substr(0, 2000);
  const json& spread = j["speedup_spread"];
  ASSERT_TRUE(spread.is_object()) << j.dump().substr(0, 2000);
  EXPECT_LE(spread["low"].get<double>(), spread["high"].get<double>());
  EXPECT_TRUE(spread["noisy"].is_boolean());
  // --threads N reaches both stages.
  const std::string example =
      std::string(CRUCIBLE_TEST_SOURCE_DIR) + "/resources/examples/silu_residual/";
  auto two = runCli({"verify", example + "reference.py", example + "candidate.py", "--json",
                     "--no-db", "--no-compile-baseline", "--reps", "3", "--trials", "2",
                     "--backend", "interpret", "--threads", "2"});
  ASSERT_EQ(two.exitCode, 0) << two.err;
  const json facts = json::parse(two.out)["facts"];
  EXPECT_EQ(facts["reference"]["timing"]["threads"], 2);
  EXPECT_EQ(facts["candidate"]["timing"]["threads"], 2);
}

TEST_F(CliContract, TheReferenceAndTheCandidateAreTimedInAlternatingRounds) {
  ASSERT_EQ(verified_->exitCode, 0) << verified_->err;
  const json j = json::parse(verified_->out);
  EXPECT_EQ(j["timing"]["interleaved"], true) << j["timing"].dump();
  const int rounds = j["timing"]["rounds"].get<int>();
  EXPECT_EQ(rounds, 3);  // --reps 3: three timing sets, one round each
  const json& facts = j["facts"];
  EXPECT_EQ(facts["reference"]["timing"]["eager_rounds_ms"].size(), rounds);
  EXPECT_EQ(facts["candidate"]["timing"]["fresh_rounds_ms"].size(), rounds);
  // Reference 0, candidate 0, reference 1, ..., then the candidate's outside check, alone.
  const json& turns = facts["turns"]["turns"];
  ASSERT_EQ(turns.size(), 2 * rounds + 1) << facts["turns"].dump();
  for (int k = 0; k < rounds; ++k) {
    EXPECT_EQ(turns[2 * k]["side"], "reference");
    EXPECT_EQ(turns[2 * k]["index"], k);
    EXPECT_EQ(turns[2 * k + 1]["side"], "candidate");
    EXPECT_EQ(turns[2 * k + 1]["index"], k);
  }
  EXPECT_EQ(turns[2 * rounds]["side"], "candidate");
  for (std::size_t i = 1; i < turns.size(); ++i) {  // never two at once
    EXPECT_LE(turns[i - 1]["end_s"].get<double>(), turns[i]["start_s"].get<double>());
  }
  EXPECT_TRUE(facts["turns"]["protocol_errors"].empty());
  for (const char* stage : {"baseline", "candidate"}) {
    EXPECT_EQ(facts[stage]["turns"]["asked"], facts[stage]["turns"]["granted"]) << stage;
  }
}

TEST_F(CliContract, EveryStageRaisesTheKernelsWallsAndTheResultSaysWhichHeld) {
  ASSERT_EQ(verified_->exitCode, 0) << verified_->err;
  const json j = json::parse(verified_->out);
  for (const char* stage : {"reference", "baseline", "candidate"}) {
    const json& walls = j["facts"][stage]["os_sandbox"];
    ASSERT_TRUE(walls.is_object()) << stage;
    // A kernel without Landlock reports why; the walls are then not all up.
    if (walls["files"].value("landlock", 0) < 1) GTEST_SKIP() << walls.dump();
    EXPECT_TRUE(walls["files"]["applied"].get<bool>()) << stage << ": " << walls.dump();
    EXPECT_TRUE(walls["syscalls"]["applied"].get<bool>()) << stage << ": " << walls.dump();
  }
  const json& candidate = j["facts"]["candidate"]["os_sandbox"];
  EXPECT_TRUE(candidate["processes"]["applied"].get<bool>()) << candidate.dump();
  EXPECT_TRUE(j["sandboxed"].get<bool>());
  EXPECT_NE(j["sandbox_note"].get<std::string>().find("Landlock"), std::string::npos)
      << j["sandbox_note"];
}

TEST_F(CliContract, StagesForkedFromTheForkServerLeaveNoFolderBehind) {
  // A TMPDIR of its own: what the run leaves in its jobs folder is this run's alone.
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  auto run = runCli({"verify", example("reference.py"), example("candidate.py"), "--json",
                     "--no-compile-baseline", "--reps", "3", "--trials", "2", "--no-db"},
                    {{"TMPDIR", tmp.string()}});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const json j = json::parse(run.out);
  const bool forked = j["facts"]["candidate"]["os_sandbox"].value("forked", false);
  if (forked) {
    EXPECT_NE(j["sandbox_note"].get<std::string>().find("the fork server's"), std::string::npos)
        << j["sandbox_note"];
  }
  const fs::path jobs = tmp / ("crucible-" + std::to_string(::getuid()) + "-jobs");
  std::vector<std::string> left;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(jobs, ec)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_TRUE(left.empty()) << left.size() << " left, the first " << left.front();
}

TEST_F(CliContract, RunIsStoredAndReadBack) {
  ASSERT_EQ(verified_->exitCode, 0);
  auto list = runCli({"sessions", "list", "--db", db(), "--json"});
  ASSERT_EQ(list.exitCode, 0) << list.err;
  const json sessions = json::parse(list.out);
  ASSERT_NE(sessions.dump().find("row_softmax"), std::string::npos) << list.out;
  auto show = runCli({"sessions", "show", "1", "--db", db(), "--json"});
  ASSERT_EQ(show.exitCode, 0) << show.err;
  EXPECT_NE(show.out.find("verified"), std::string::npos);
  EXPECT_NE(show.out.find("softmax_kernel"), std::string::npos);  // the candidate's code
}

TEST_F(CliContract, BadUsageAndBadFilesExitWithTwo) {
  EXPECT_EQ(runCli({"verify"}).exitCode, 2);
  EXPECT_EQ(runCli({"verify", "a.py", "b.py", "--trials", "zero"}).exitCode, 2);
  auto unknown = runCli({"verify", example("reference.py"), example("candidate.py"), "--backend",
                         "metal", "--no-db"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("unknown backend 'metal'"), std::string::npos) << unknown.err;

  const std::string bad = (dir_ / "bad_reference.py").string();
  std::ofstream(bad) << "import torch\n\nclass Model:\n    def forward(self x):\n        pass\n";
  auto r = runCli({"verify", bad, example("candidate.py"), "--no-db"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(bad + ":4:"), std::string::npos) << r.err;
  EXPECT_EQ(runCli({"sessions", "show", "999", "--db", db()}).exitCode, 2);
}

}  // namespace
}  // namespace crucible
