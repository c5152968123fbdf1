// `crucible bench` through the real binary, the fast part (label cli): one task the built-in
// synthesizer cannot lower (group norm), so the run is a trace and no verification; the JSON's
// keys, the report folder, resuming a finished row without redoing it, settings that do not match,
// --compare on the eval_results.json it wrote, and bad usage. The full run with verified kernels
// is tests/cli/slow/test_bench_run.cpp (label slow).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/util/locations.h"
#include "tests/cli/cli_run.h"
#include "tests/support/interrupted_run.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::runCli;

const std::string kSource = CRUCIBLE_TEST_SOURCE_DIR;

class BenchCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("crucible-bench-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "tasks");
    // An op the synthesizer does not lower (it names it), so the task gets no kernel.
    std::ofstream(dir_ / "tasks" / "24_roll_rows.py") << R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.roll(x, 1, 1)


def get_inputs():
    return [torch.rand(4, 16)]


def get_init_inputs():
    return []
)";
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static inline fs::path dir_;
};

std::vector<std::string> benchArgs(const fs::path& dir) {
  return {"bench",
          (dir / "tasks").string(),
          "--backend",
          "interpret",
          "--trials",
          "1",
          "--reps",
          "1",
          "--no-db",
          "--report",
          (dir / "report").string(),
          "--json"};
}

TEST_F(BenchCli, ATaskWithoutAKernelCountsAsFailedAndIsResumed) {
  const auto first = runCli(benchArgs(dir_));
  ASSERT_EQ(first.exitCode, 0) << first.err << first.out;
  const json result = json::parse(first.out);
  for (const char* key : {"tasks", "correct_rate", "fast_p", "fast_p_vs_compile", "geomean_speedup",
                          "shrunk", "pass_at_k", "settings", "resumed"}) {
    EXPECT_TRUE(result.contains(key)) << key;
  }
  ASSERT_EQ(result["tasks"].size(), 1u);
  const json& row = result["tasks"][0];
  EXPECT_EQ(row["id"], "24_roll_rows");
  EXPECT_EQ(row["problem_id"], 24);
  EXPECT_TRUE(row["verdict"].is_null());
  EXPECT_NE(row["error"].get<std::string>().find("cannot lower"), std::string::npos) << row;
  EXPECT_EQ(result["correct_rate"], 0.0);
  for (const char* p : {"0", "0.5", "1", "1.5", "2"}) EXPECT_EQ(result["fast_p"][p], 0.0) << p;
  EXPECT_TRUE(result["fast_p_vs_compile"].is_null());  // nothing was timed
  EXPECT_TRUE(result["geomean_speedup"].is_null());
  EXPECT_EQ(result["shrunk"], false);
  EXPECT_EQ(result["settings"]["backend"], "interpret");

  const fs::path report = dir_ / "report";
  for (const char* file : {"report.md", "bench.json", "eval_results.json", "run.json",
                           "results.jsonl", "speedup_distribution.png", "fast_p_curve.png"}) {
    EXPECT_TRUE(fs::exists(report / file)) << file;
  }
  EXPECT_NE(readFile((report / "report.md").string())->find("| 24_roll_rows |"), std::string::npos);
  EXPECT_EQ(json::parse(*readFile((report / "eval_results.json").string())),
            json::parse(R"({"24": []})"));

  // A task without a kernel is not finished: a rerun would run it again (the generator may have
  // failed for a moment). A row with a kernel is: rewrite the row as if a kernel had verified
  // at 2x, and the same command again takes it back instead of running the task.
  json saved = json::parse(*readFile((report / "results.jsonl").string()));
  EXPECT_EQ(saved["id"], "24_roll_rows");
  saved["samples"] = json::array(
      {{{"verdict", "verified"},
        {"correct", true},
        {"compiled", true},
        {"reference_ms", 2.0},
        {"candidate_ms", 1.0},
        {"compile_ms", nullptr},
        {"stage_seconds",
         {{{"stage", "candidate"}, {"seconds", 3.0}}, {{"stage", "compare"}, {"seconds", 1.0}}}}}});
  saved["chosen"] = 0;
  std::ofstream(report / "results.jsonl") << saved.dump() << "\n";
  const auto second = runCli(benchArgs(dir_));
  ASSERT_EQ(second.exitCode, 0) << second.err;
  EXPECT_NE(second.err.find("resuming: 1 task(s) already finished"), std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("24_roll_rows: resumed"), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find("[start]"), std::string::npos) << second.err;
  const json again = json::parse(second.out);
  EXPECT_EQ(again["resumed"], 1);
  EXPECT_EQ(again["tasks"][0]["speedup"], 2.0);
  EXPECT_EQ(again["fast_p"]["1.5"], 1.0);
  EXPECT_EQ(again["fast_p"]["2"], 0.0);
  // The report sums the samples' verification stages.
  const std::string md = *readFile((report / "report.md").string());
  EXPECT_NE(md.find("## Verification time"), std::string::npos) << md;
  EXPECT_NE(md.find("| candidate | 3.0 | 75.0% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| compare | 1.0 | 25.0% |"), std::string::npos) << md;

  // Other settings in the same folder are refused rather than mixed; --fresh starts over.
  auto other = benchArgs(dir_);
  other[5] = "2";  // --trials 2
  const auto refused = runCli(other);
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("trials 2, not 1"), std::string::npos) << refused.err;

  const auto compared =
      runCli({"bench", "--compare", (report / "eval_results.json").string(), "--json"});
  ASSERT_EQ(compared.exitCode, 0) << compared.err;
  EXPECT_EQ(json::parse(compared.out)["correct_rate"], 1.0);
  EXPECT_EQ(json::parse(compared.out)["fast_p"], again["fast_p"]);
}

TEST_F(BenchCli, CtrlCStopsCleanlyAndWritesWhatFinished) {
  const fs::path report = dir_ / "interrupted";
  std::vector<std::string> args = {CRUCIBLE_TEST_CLI, "bench",        (dir_ / "tasks").string(),
                                   "--backend",       "interpret",    "--no-db",
                                   "--report",        report.string()};
  // Interrupt while the task runs (the synthesizer's trace stage).
  const auto run = testing::interruptWhenSeen(args, "[start] 24_roll_rows\n");
  const std::string& progress = run.err;
  ASSERT_TRUE(run.sawMarker) << progress;
  ASSERT_TRUE(run.exited) << progress;
  EXPECT_EQ(run.exitCode, 130) << progress;
  EXPECT_NE(progress.find("interrupted; 0 of 1 tasks finished"), std::string::npos) << progress;
  // The report says so; no row was saved, so a rerun runs the task.
  EXPECT_NE(readFile((report / "report.md").string())->find("**Interrupted**"), std::string::npos);
  EXPECT_EQ(readFile((report / "results.jsonl").string()).value_or(""), "");
}

TEST_F(BenchCli, BadUsageAndInput) {
  EXPECT_EQ(runCli({"bench"}).exitCode, 2);
  EXPECT_EQ(runCli({"bench", (dir_ / "tasks").string(), "--shrink", "2"}).exitCode, 2);
  EXPECT_EQ(runCli({"bench", (dir_ / "tasks").string(), "--fresh"}).exitCode, 2);
  EXPECT_EQ(runCli({"bench", "--compare", "x.json", "--level", ""}).exitCode, 2);
  EXPECT_EQ(runCli({"bench", (dir_ / "tasks").string(), "--levels", ","}).exitCode, 2);
  const auto missing = runCli({"bench", (dir_ / "nowhere").string(), "--no-db"});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find("not a folder"), std::string::npos) << missing.err;
  std::ofstream(dir_ / "broken.json") << R"({"1": [{"compiled": true}]})";
  const auto broken = runCli({"bench", "--compare", (dir_ / "broken.json").string()});
  EXPECT_EQ(broken.exitCode, 2);
  EXPECT_NE(broken.err.find("correctness"), std::string::npos) << broken.err;
  const auto help = runCli({"bench", "--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("--shrink F"), std::string::npos);
}

}  // namespace
}  // namespace crucible
