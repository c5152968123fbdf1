// Stages started through the worker's fork server (core/proc/fork_server.h,
// core/verify/stage_fork_server.h): the real server, with torch imported once, and proc::run's
// guarantees kept for its children (exit status, result channel, timeout and group kill).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/proc/fork_server.h"
#include "core/verify/stage_fork_server.h"
#include "core/verify/worker_stage.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

WorkerLocation testWorker() {
  return {CRUCIBLE_TEST_PYTHON, std::string(CRUCIBLE_TEST_WORKER_DIR) + "/worker.py", {}};
}

class StageForkServer : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = stageForkServer(testWorker(), "interpret", "");
    if (!server_) GTEST_SKIP() << "no fork server here (Landlock below ABI 6, or no torch)";
    job_ = std::make_unique<JobDir>(std::vector<std::string>{"scratch"});
  }

  /// A static stage's spec on `jobFile`, with the walls' plan a forked stage insists on.
  proc::ProcessSpec stageSpec(const std::string& jobFile, bool withPlan = true) {
    const fs::path scratch = *job_ / "scratch";
    proc::ProcessSpec spec;
    spec.argv = server_->server->program();
    spec.argv.insert(spec.argv.end(), {"static", jobFile});
    spec.env = workerEnvironment(scratch, "interpret");
    const auto prefix = fs::path(CRUCIBLE_TEST_PYTHON).parent_path().parent_path().string();
    if (withPlan) {
      spec.env["CRUCIBLE_SANDBOX"] = json{
          {"read", {prefix, CRUCIBLE_TEST_WORKER_DIR, jobFile}},
          {"write", {scratch.string()}},
          {"hidden", {temporaryRoot()}}}.dump();
    }
    spec.workingDir = scratch.string();
    spec.limits.wallTimeout = 60s;
    spec.forkServer = server_->server;
    return spec;
  }

  std::string writeJob(const std::string& text) {
    const fs::path path = job_->root() / "static-job.json";
    writeFile(path, text);
    return path.string();
  }

  std::shared_ptr<const StageServer> server_;
  std::unique_ptr<JobDir> job_;
};

TEST_F(StageForkServer, TheServerImportedTorchOnceAndForksFromOneThread) {
  const auto& hello = server_->server->hello();
  EXPECT_TRUE(hello.contains("torch")) << hello.dump();
  EXPECT_EQ(hello.value("threads", 0), 1);
  EXPECT_FALSE(hello.value("triton_imported", true));
}

TEST_F(StageForkServer, AForkedStageReportsItsFactsAndExitLikeAFreshOne) {
  auto spec = stageSpec(writeJob("{}"));
  int group = -1;
  spec.onStarted = [&](int pgid) { group = pgid; };
  const auto result = proc::run(spec);
  ASSERT_FALSE(result.launchFailed) << result.launchError;
  EXPECT_EQ(result.exitCode, 0) << result.stderrText;
  EXPECT_GT(group, 0);
  EXPECT_NE(group, server_->server->hello().value("pid", 0));
  ASSERT_FALSE(result.channel.empty()) << result.stderrText;
  const auto line = json::parse(result.channel.back().text);
  const auto facts = json::parse(line["body"].get<std::string>())["facts"];
  EXPECT_TRUE(facts["os_sandbox"].value("applied", false)) << facts.dump();
  EXPECT_TRUE(facts["os_sandbox"].value("forked", false));
}

TEST_F(StageForkServer, AStageWithoutItsWallsStopsBeforeItRuns) {
  const auto result = proc::run(stageSpec(writeJob("{}"), /*withPlan=*/false));
  EXPECT_EQ(result.exitCode, 75);
  EXPECT_TRUE(result.channel.empty());
  EXPECT_NE(result.stderrText.find("walls did not all go up"), std::string::npos);
}

TEST_F(StageForkServer, TheTimeoutKillsTheForkedGroup) {
  // Opening a job that is a FIFO nobody writes blocks the stage until it is killed.
  const fs::path fifo = job_->root() / "blocked.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto spec = stageSpec(fifo.string());
  spec.limits.wallTimeout = 500ms;
  const auto started = std::chrono::steady_clock::now();
  const auto result = proc::run(spec);
  EXPECT_TRUE(result.timedOut);
  EXPECT_EQ(result.termSignal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

TEST_F(StageForkServer, AProgramThatIsNotTheServersIsRefused) {
  auto spec = stageSpec(writeJob("{}"));
  spec.argv = {"/bin/true"};
  const auto result = proc::run(spec);
  EXPECT_TRUE(result.launchFailed);
  EXPECT_NE(result.launchError.find("not the fork server's"), std::string::npos);
}

TEST_F(StageForkServer, ItsViewHoldsTheJobsButNotTheRestOfTheMachine) {
  EXPECT_TRUE(server_->sees({job_->root().string()}));
  if (server_->view.empty()) GTEST_SKIP() << "no bubblewrap: the server sees everything";
  EXPECT_FALSE(server_->sees({"/home"}));
  EXPECT_FALSE(server_->sees({temporaryRoot()}));
}

}  // namespace
}  // namespace crucible
