// Export bundles: a verified kernel is written as four files; an unverified one only by
// deliberate choice, and then marked in every file.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/export/bundle.h"
#include "core/util/locations.h"
#include "temp_dir.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;

class BundleTest : public ::testing::Test {
 protected:
  BundleInput input(std::optional<Verdict> verdict) {
    BundleInput in{"row softmax", "class Model: pass\n", "class ModelNew: pass\n", "edit", {}};
    if (verdict) {
      Evaluation e;
      e.verdict = *verdict;
      e.correct = *verdict == Verdict::Verified;
      e.backend = "interpret";
      in.evaluation = e;
    }
    return in;
  }
  test::TempDir dir{"crucible-bundle"};
  const fs::path& dir_ = dir.path();
};

TEST_F(BundleTest, VerifiedKernelIsWrittenAsFourFiles) {
  const auto written = writeBundle((dir_ / "out").string(), input(Verdict::Verified), false);
  ASSERT_EQ(written.size(), 4u);
  EXPECT_EQ(readFile((dir_ / "out" / "row_softmax_kernel.py").string()), "class ModelNew: pass\n");
  EXPECT_EQ(readFile((dir_ / "out" / "row_softmax_reference.py").string()), "class Model: pass\n");
  const auto report = nlohmann::json::parse(*readFile((dir_ / "out" / "report.json").string()));
  EXPECT_FALSE(report["unverified"].get<bool>());
  EXPECT_EQ(report["evaluation"]["verdict"], "verified");
  const auto md = *readFile((dir_ / "out" / "report.md").string());
  EXPECT_NE(md.find("VERIFIED"), std::string::npos);
  EXPECT_EQ(md.find("UNVERIFIED"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "report.json.part"));
}

TEST_F(BundleTest, UnverifiedNeedsADeliberateChoiceAndIsMarked) {
  for (auto verdict : {std::optional<Verdict>(Verdict::Incorrect), std::optional<Verdict>()}) {
    const auto in = input(verdict);
    EXPECT_FALSE(isExportableWithoutConfirmation(in));
    EXPECT_THROW(writeBundle((dir_ / "refused").string(), in, false), ExportRefused);
    EXPECT_FALSE(fs::exists(dir_ / "refused"));
    writeBundle((dir_ / "marked").string(), in, true);
    EXPECT_EQ(
        readFile((dir_ / "marked" / "row_softmax_kernel.py").string())->rfind("# UNVERIFIED", 0),
        0u);
    const auto report =
        nlohmann::json::parse(*readFile((dir_ / "marked" / "report.json").string()));
    EXPECT_TRUE(report["unverified"].get<bool>());
    EXPECT_NE(readFile((dir_ / "marked" / "report.md").string())->find("UNVERIFIED"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace crucible
