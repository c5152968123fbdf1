// `crucible profile` through the real binary on opencl: the bundled silu_residual example's one
// launch, with the bytes and FLOPs worked out by hand from its kernel, the JSON keys the
// workbench's profile view reads, the text table, and the exit codes for a candidate that
// fails, hangs or is interrupted, and for bad usage.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/cli_run.h"
#include "tests/support/interrupted_run.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;

fs::path example(const char* file) {
  return fs::path(CRUCIBLE_TEST_SOURCE_DIR) / "resources" / "examples" / "silu_residual" / file;
}

TEST(ProfileCli, CountsTheBundledExamplesBytesAndFlops) {
  const auto run =
      testing::runProgram(CRUCIBLE_TEST_CLI, {"profile", example("candidate.py").string(),
                                              "--reference", example("reference.py").string(),
                                              "--backend", "opencl", "--calls", "3", "--json"});
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_TRUE(j["error"].is_null()) << j.dump(2);
  EXPECT_TRUE(j["count_note"].is_null()) << j.dump(2);
  EXPECT_EQ(j["device"]["backend"], "opencl");
  EXPECT_GT(j["device"]["bandwidth_gbs"].get<double>(), 0);
  EXPECT_GT(j["device"]["peak_gflops"].get<double>(), 0);
  EXPECT_NE(j["timer"].get<std::string>().find("clFinish"), std::string::npos);
  EXPECT_EQ(j["calls"], 3);
  EXPECT_EQ(j["forward"]["samples"], 3);
  ASSERT_EQ(j["launches"].size(), 1u) << j.dump(2);
  const auto& l = j["launches"][0];
  EXPECT_EQ(l["kernel"], "silu_residual_kernel");
  EXPECT_EQ(l["def_line"], 9);      // `def silu_residual_kernel(...)`, under its decorator
  EXPECT_EQ(l["launch_line"], 29);  // `silu_residual_kernel[(triton.cdiv(n, BLOCK),)](...)`
  EXPECT_EQ(l["grid"], nlohmann::json::array({512, 1, 1}));  // 2048 * 1024 / 4096
  // The reference's inputs are two 2048 x 1024 float32 tensors: N elements read twice and
  // written once, every mask true (N is a multiple of the block).
  constexpr std::int64_t n = 2048 * 1024;
  EXPECT_TRUE(l["counted"].get<bool>());
  EXPECT_EQ(l["bytes_read"], 2 * n * 4);
  EXPECT_EQ(l["bytes_written"], n * 4);
  EXPECT_EQ(l["bytes"], 3 * n * 4);
  // Per element: sigmoid's negation, exp, add and divide, then x * sigmoid, * scale, + r,
  // maximum and minimum.
  EXPECT_EQ(l["flops"], 9 * n);
  EXPECT_EQ(l["time"]["samples"], 3);
  EXPECT_GT(l["time"]["median_ms"].get<double>(), 0);
  EXPECT_GT(l["achieved_gbs"].get<double>(), 0);
  EXPECT_EQ(l["roof"]["bound"], "memory");  // 0.75 FLOP per byte is far left of any CPU's ridge
  EXPECT_NEAR(l["roof"]["intensity"].get<double>(), 0.75, 1e-12);
  EXPECT_NEAR(l["roof"]["fraction"].get<double>(),
              l["achieved_gbs"].get<double>() / j["device"]["bandwidth_gbs"].get<double>(), 1e-9);
  EXPECT_GT(l["share"].get<double>(), 0);
  EXPECT_LE(l["share"].get<double>(), 1.0);
}

TEST(ProfileCli, PrintsATable) {
  const auto run = testing::runProgram(
      CRUCIBLE_TEST_CLI, {"profile", example("candidate.py").string(), "--reference",
                          example("reference.py").string(), "--backend", "opencl", "--calls", "2"});
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("GFLOP/s"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("silu_residual_kernel  29 (def 9)  512x1x1"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("25165824"), std::string::npos) << run.out;  // 3 * N * 4 bytes
  EXPECT_NE(run.out.find("of memory"), std::string::npos) << run.out;
}

TEST(ProfileCli, AFailingCandidateNamesItsLineAndExitsOne) {
  const fs::path dir =
      fs::temp_directory_path() / ("crucible-profile-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path candidate = dir / "broken.py";
  std::ofstream(candidate) << "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                              "    def __init__(self, scale):\n        super().__init__()\n\n"
                              "    def forward(self, x, r):\n        return 1 / 0\n";
  const auto run = testing::runProgram(
      CRUCIBLE_TEST_CLI, {"profile", candidate.string(), "--reference",
                          example("reference.py").string(), "--backend", "opencl", "--json"});
  fs::remove_all(dir);
  ASSERT_EQ(run.exitCode, 1) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["error"]["stage"], "run");
  EXPECT_EQ(j["error"]["line"], 9);
  EXPECT_EQ(j["error"]["file"], candidate.string());
  EXPECT_NE(j["error"]["message"].get<std::string>().find("ZeroDivisionError"), std::string::npos);
  EXPECT_NE(run.err.find("broken.py:9"), std::string::npos) << run.err;
}

/// A candidate whose forward never returns, in a folder of its own (removed by the caller).
fs::path hangingCandidate(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("crucible-profile-" + name + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "hangs.py") << "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                                     "    def __init__(self, scale):\n        super().__init__()\n"
                                     "\n    def forward(self, x, r):\n        while True:\n"
                                     "            pass\n";
  return dir;
}

TEST(ProfileCli, AHangingCandidateIsStoppedAtTheTimeout) {
  const fs::path dir = hangingCandidate("timeout");
  const auto started = std::chrono::steady_clock::now();
  const auto run =
      testing::runProgram(CRUCIBLE_TEST_CLI, {"profile", (dir / "hangs.py").string(), "--reference",
                                              example("reference.py").string(), "--backend",
                                              "opencl", "--timeout", "5", "--json"});
  const auto took = std::chrono::steady_clock::now() - started;
  fs::remove_all(dir);
  ASSERT_EQ(run.exitCode, 3) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["error"]["stage"], "timeout") << j.dump(2);
  EXPECT_TRUE(j["launches"].empty());
  EXPECT_LT(took, std::chrono::seconds(120));  // the reference's few seconds, then 5 s
}

TEST(ProfileCli, CtrlCStopsTheRun) {
  const fs::path dir = hangingCandidate("interrupt");
  const auto run = testing::interruptWhenSeen(
      {CRUCIBLE_TEST_CLI, "profile", (dir / "hangs.py").string(), "--reference",
       example("reference.py").string(), "--backend", "opencl", "--timeout", "300"},
      "[time]");
  fs::remove_all(dir);
  ASSERT_TRUE(run.sawMarker) << run.err;
  ASSERT_TRUE(run.exited) << run.err;
  EXPECT_EQ(run.exitCode, 3) << run.err;
  EXPECT_NE(run.err.find("cancelled"), std::string::npos) << run.err;
  EXPECT_LT(run.afterInterrupt, std::chrono::seconds(30));  // not the 300 s timeout
}

TEST(ProfileCli, BadUsageExitsTwo) {
  const auto noReference =
      testing::runProgram(CRUCIBLE_TEST_CLI, {"profile", example("candidate.py").string()});
  EXPECT_EQ(noReference.exitCode, 2);
  EXPECT_NE(noReference.err.find("--reference"), std::string::npos) << noReference.err;
  const auto missing =
      testing::runProgram(CRUCIBLE_TEST_CLI, {"profile", "/nonexistent/candidate.py", "--reference",
                                              example("reference.py").string(), "--json"});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find("/nonexistent/candidate.py"), std::string::npos) << missing.err;
  const auto badCalls = testing::runProgram(
      CRUCIBLE_TEST_CLI, {"profile", example("candidate.py").string(), "--reference",
                          example("reference.py").string(), "--calls", "0"});
  EXPECT_EQ(badCalls.exitCode, 2);
}

}  // namespace
}  // namespace crucible
