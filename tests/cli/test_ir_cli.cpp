// `crucible ir` through the real binary: the bundled row_softmax example on opencl (the OpenCL
// C crucible_tcl compiles, each C line beside its Python line), the interpret backend (nothing
// compiled), a candidate that fails (exit 1 with its line) and bad usage (exit 2).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/inspect/kernel_ir.h"
#include "tests/support/cli_run.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;

const fs::path kExample =
    fs::path(CRUCIBLE_TEST_SOURCE_DIR) / "resources" / "examples" / "row_softmax";

/// The 1-based line of `file` holding `needle` (0: none).
int lineHolding(const fs::path& file, const std::string& needle) {
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

testing::CliResult ir(const std::vector<std::string>& extra, const fs::path& candidate) {
  std::vector<std::string> args = {"ir", candidate.string(), "--reference",
                                   (kExample / "reference.py").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing::runProgram(CRUCIBLE_TEST_CLI, args);
}

/// The Python lines of the level's lines containing `needle` (unmapped lines left out).
std::set<int> linesOf(const inspect::IrLevel& level, const std::string& needle) {
  const auto lines = inspect::splitIrLines(level.text);
  std::set<int> found;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(needle) != std::string::npos && level.lineMap.at(i)) {
      found.insert(*level.lineMap[i]);
    }
  }
  return found;
}

TEST(IrCli, OpenclShowsTheCompiledCWithEachLinesPythonLine) {
  const fs::path candidate = kExample / "candidate.py";
  const auto run = ir({"--backend", "opencl", "--json"}, candidate);
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  const auto report = inspect::kernelIrReportFromJson(nlohmann::json::parse(run.out));
  EXPECT_EQ(report.backend, "opencl");
  EXPECT_TRUE(report.compiled);
  EXPECT_FALSE(report.error);
  ASSERT_EQ(report.kernels.size(), 1u);
  const auto& kernel = report.kernels[0];
  EXPECT_EQ(kernel.name, "softmax_kernel");
  EXPECT_EQ(kernel.defLine, lineHolding(candidate, "def softmax_kernel"));
  ASSERT_EQ(kernel.levels.size(), 1u);
  const auto& level = kernel.levels[0];
  EXPECT_EQ(level.name, "opencl_c");
  ASSERT_EQ(level.lineMap.size(), inspect::splitIrLines(level.text).size());
  // Each part of the C names the statement it computes: the program id, the row's max, the
  // exponentials (computed once, read by the sum and the store), the store.
  EXPECT_EQ(linesOf(level, "get_group_id(0)"),
            std::set<int>{lineHolding(candidate, "row = tl.program_id(0)")});
  EXPECT_EQ(linesOf(level, "fmax("), std::set<int>{lineHolding(candidate, "tl.max(x, axis=0)")});
  EXPECT_EQ(linesOf(level, "exp("), std::set<int>{lineHolding(candidate, "e = tl.exp(x)")});
  EXPECT_EQ(linesOf(level, "(a_out_ptr + "),
            std::set<int>{lineHolding(candidate, "tl.store(out_ptr")});
  // The load of x is fused into the loops that read it: those of the max and the exponentials.
  EXPECT_EQ(linesOf(level, "(a_x_ptr + "),
            (std::set<int>{lineHolding(candidate, "tl.max(x, axis=0)"),
                           lineHolding(candidate, "e = tl.exp(x)")}));

  // The text form prints the same: the Python line, a bar, the C line.
  const auto text = ir({"--backend", "opencl", "--level", "opencl_c"}, candidate);
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(
      text.out.find("kernel softmax_kernel (def at line " + std::to_string(*kernel.defLine) + ")"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("-- opencl_c"), std::string::npos);
  EXPECT_NE(text.out.find("    16 |   for ("), std::string::npos) << text.out;
}

TEST(IrCli, CudaWithoutAGpuShowsTritonsLevelsMappedToTheKernel) {
  const fs::path candidate = kExample / "candidate.py";
  const auto run = ir({"--backend", "cuda", "--json"}, candidate);
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  const auto report = inspect::kernelIrReportFromJson(nlohmann::json::parse(run.out));
  ASSERT_EQ(report.kernels.size(), 1u);
  const auto& kernel = report.kernels[0];
  ASSERT_FALSE(kernel.error) << kernel.error->message;
  ASSERT_EQ(kernel.levels.size(), 4u);
  const int loadLine = lineHolding(candidate, "x = tl.load(x_ptr");
  const int storeLine = lineHolding(candidate, "tl.store(out_ptr");
  for (const auto& level : kernel.levels) EXPECT_FALSE(level.error) << level.name;
  EXPECT_EQ(kernel.levels[0].name, "ttir");
  EXPECT_EQ(linesOf(kernel.levels[0], "tt.load"), std::set<int>{loadLine});
  EXPECT_EQ(linesOf(kernel.levels[0], "tt.store"), std::set<int>{storeLine});
  EXPECT_EQ(kernel.levels[3].name, "ptx");
  EXPECT_TRUE(linesOf(kernel.levels[3], "ld.global").count(loadLine));
}

TEST(IrCli, InterpretCompilesNothingAndSaysSo) {
  const auto run = ir({"--backend", "interpret", "--json"}, kExample / "candidate.py");
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["compiled"], false);
  EXPECT_TRUE(j["kernels"].empty());
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_NE(j["note"].get<std::string>().find("compiles nothing"), std::string::npos);
}

TEST(IrCli, ACandidateThatFailsExitsOneWithItsLine) {
  const fs::path candidate =
      fs::temp_directory_path() / ("crucible-ir-fails-" + std::to_string(::getpid()) + ".py");
  std::ofstream(candidate) << "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                              "    def forward(self, x):\n"
                              "        raise RuntimeError('no kernel today')\n";
  const auto run = ir({"--backend", "interpret", "--json"}, candidate);
  fs::remove(candidate);
  ASSERT_EQ(run.exitCode, 1) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["error"]["line"], 6);
  EXPECT_EQ(j["error"]["file"], candidate.string());
  EXPECT_NE(run.err.find(candidate.string() + ":6: RuntimeError: no kernel today"),
            std::string::npos)
      << run.err;
}

TEST(IrCli, ACandidateThatHangsIsStoppedAtTheTimeout) {
  const fs::path candidate =
      fs::temp_directory_path() / ("crucible-ir-hangs-" + std::to_string(::getpid()) + ".py");
  std::ofstream(candidate) << "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                              "    def forward(self, x):\n"
                              "        while True:\n"
                              "            pass\n";
  const auto run = ir({"--backend", "interpret", "--timeout", "3"}, candidate);
  fs::remove(candidate);
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("did not finish in time"), std::string::npos) << run.err;
}

TEST(IrCli, BadUsageExitsTwoNamingTheProblem) {
  auto run = testing::runProgram(CRUCIBLE_TEST_CLI, {"ir", "c.py"});
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_NE(run.err.find("--reference REFERENCE.py is required"), std::string::npos) << run.err;
  run = ir({"--level", "sass"}, kExample / "candidate.py");
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_NE(run.err.find("--level"), std::string::npos);
  run = ir({}, kExample / "missing.py");
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_NE(run.err.find("missing.py: cannot read the file"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace crucible
