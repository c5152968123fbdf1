// Every bundled example (resources/examples/NAME: reference.py and its hand-written candidate.py,
// listed in the workbench's File > Examples) verifies through the real CLI on opencl, the
// backend `auto` picks on a machine without an NVIDIA GPU: an example that stopped verifying
// would greet a new user with a failure.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/cli_run.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> exampleNames() {
  std::vector<std::string> names;
  for (const auto& entry :
       fs::directory_iterator(fs::path(CRUCIBLE_TEST_SOURCE_DIR) / "resources" / "examples")) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class BundledExample : public ::testing::TestWithParam<std::string> {};

TEST_P(BundledExample, CandidateVerifiesOnOpenclWithoutCheatingFlags) {
  const fs::path dir = fs::path(CRUCIBLE_TEST_SOURCE_DIR) / "resources" / "examples" / GetParam();
  ASSERT_TRUE(fs::exists(dir / "reference.py")) << dir;
  ASSERT_TRUE(fs::exists(dir / "candidate.py")) << dir;
  const fs::path db = fs::temp_directory_path() /
                      ("crucible-example-" + GetParam() + "-" + std::to_string(::getpid()) + ".db");
  const auto run = testing::runProgram(
      CRUCIBLE_TEST_CLI,
      {"verify", (dir / "reference.py").string(), (dir / "candidate.py").string(), "--backend",
       "opencl", "--json", "--no-compile-baseline", "--reps", "3", "--db", db.string()});
  fs::remove(db);
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["verdict"], "verified") << run.out;
  // Only warnings about the timing itself, which a loaded machine (a parallel test run) rightly
  // raises: they are about the measurement, not the kernel.
  const std::set<std::string> aboutTiming = {"implausible_speedup", "contended_timing",
                                             "unconfirmed_timing"};
  for (const auto& flag : j["flags"]) {
    EXPECT_TRUE(aboutTiming.count(flag["id"].get<std::string>())) << flag.dump();
    EXPECT_EQ(flag["severity"], "warning") << flag.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, BundledExample, ::testing::ValuesIn(exampleNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace crucible
