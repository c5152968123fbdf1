// `crucible bench` with verified kernels (label slow: about two minutes on a loaded 2-core
// machine): two corpus tasks shrunk by --shrink, the built-in synthesizer on the interpret
// backend; the rows, the report folder with its plots and KernelBench's eval_results.json, the
// database's sessions, a second run that resumes without generating or verifying anything, and
// --compare giving back the same metrics.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/util/locations.h"
#include "tests/cli/cli_run.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::runCli;

int storedSessions(const std::string& db) {
  const auto r = runCli({"sessions", "list", "--db", db, "--json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return static_cast<int>(json::parse(r.out)["sessions"].size());
}

TEST(BenchRun, VerifiesReportsAndResumes) {
  const fs::path dir =
      fs::temp_directory_path() / ("crucible-bench-run-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "tasks");
  for (const char* file : {"12_ReLU.py", "17_Sigmoid.py"}) {
    fs::copy_file(std::string(CRUCIBLE_TEST_SOURCE_DIR) + "/resources/tasks/level1/" + file,
                  dir / "tasks" / file);
  }
  const std::string db = (dir / "bench.db").string();
  const std::vector<std::string> args = {"bench",
                                         (dir / "tasks").string(),
                                         "--backend",
                                         "interpret",
                                         "--trials",
                                         "1",
                                         "--reps",
                                         "1",
                                         "--no-compile-baseline",
                                         "--shrink",
                                         "0.125",
                                         "--db",
                                         db,
                                         "--report",
                                         (dir / "report").string(),
                                         "--json"};

  const auto first = runCli(args);
  ASSERT_EQ(first.exitCode, 0) << first.err << first.out;
  const json result = json::parse(first.out);
  ASSERT_EQ(result["tasks"].size(), 2u);
  EXPECT_EQ(result["tasks"][0]["id"], "12_ReLU");
  for (const json& row : result["tasks"]) {
    EXPECT_EQ(row["verdict"], "verified") << row.dump();
    EXPECT_TRUE(row["speedup"].is_number()) << row.dump();
    EXPECT_TRUE(row["session"].is_number());
  }
  EXPECT_EQ(result["correct_rate"], 1.0);
  EXPECT_EQ(result["fast_p"]["0"], 1.0);
  EXPECT_TRUE(result["geomean_speedup"].is_number());
  EXPECT_TRUE(result["fast_p_vs_compile"].is_null());  // --no-compile-baseline
  EXPECT_EQ(result["shrunk"], true);
  EXPECT_EQ(result["pass_at_k"]["1"], 1.0);
  EXPECT_NE(first.err.find("ETA"), std::string::npos) << first.err;

  const fs::path report = dir / "report";
  const std::string md = *readFile((report / "report.md").string());
  EXPECT_NE(md.find("Shrunk tasks"), std::string::npos);
  EXPECT_NE(md.find("| candidate | "), std::string::npos) << md;  // the verification time
  const json evalResults = json::parse(*readFile((report / "eval_results.json").string()));
  ASSERT_TRUE(evalResults.contains("12") && evalResults.contains("17")) << evalResults.dump();
  EXPECT_EQ(evalResults["12"][0]["correctness"], true);
  EXPECT_EQ(evalResults["12"][0]["metadata"]["shrunk"], true);
  EXPECT_GT(evalResults["12"][0]["ref_runtime"].get<double>(), 0);
  EXPECT_NE(readFile((report / "shrunk" / "12_ReLU.py").string())->find("# shrunk from 65536"),
            std::string::npos);
  for (const char* png : {"speedup_distribution.png", "fast_p_curve.png"}) {
    const auto bytes = readFile((report / png).string());
    ASSERT_TRUE(bytes) << png;
    EXPECT_EQ(bytes->substr(1, 3), "PNG") << png;
    EXPECT_NE(md.find(png), std::string::npos);
  }
  EXPECT_EQ(storedSessions(db), 2);

  // The same command again: nothing is generated, verified or stored; the rows come back.
  const auto second = runCli(args);
  ASSERT_EQ(second.exitCode, 0) << second.err;
  EXPECT_NE(second.err.find("resuming: 2 task(s) already finished"), std::string::npos)
      << second.err;
  const json again = json::parse(second.out);
  EXPECT_EQ(again["resumed"], 2);
  EXPECT_EQ(again["tasks"], result["tasks"]);
  EXPECT_EQ(storedSessions(db), 2);

  const auto compared =
      runCli({"bench", "--compare", (report / "eval_results.json").string(), "--json"});
  ASSERT_EQ(compared.exitCode, 0) << compared.err;
  const json c = json::parse(compared.out);
  EXPECT_EQ(c["fast_p"], result["fast_p"]);
  EXPECT_EQ(c["correct_rate"], result["correct_rate"]);
  EXPECT_EQ(c["geomean_speedup"], result["geomean_speedup"]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace crucible
