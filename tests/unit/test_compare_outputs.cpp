// The compare step over a job folder: which comparisons the judge gets, which candidate files
// are refused for their digest, and in which order, whatever the order the packs were read in.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/util/sha256.h"
#include "core/verify/compare_outputs.h"
#include "core/verify/job_packs.h"
#include "pack_writer.h"
#include "temp_dir.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;

class CompareOutputs : public ::testing::Test {
 protected:
  CompareOutputs() {
    for (const char* sub : {"ref", "cand", "inputs"}) fs::create_directories(dir_.path() / sub);
  }

  void reference(const std::string& name, std::vector<float> values, const char* sub = "ref") {
    test::writePack((dir_.path() / sub / name).string(), {test::floats(std::move(values))});
  }
  /// A candidate file, its digest reported unless `reported` is false.
  void candidate(const std::string& name, std::vector<float> values, bool reported = true) {
    const std::string bytes = test::packBytes({test::floats(std::move(values))});
    std::ofstream(dir_.path() / "cand" / name, std::ios::binary) << bytes;
    if (reported) digests_[name] = util::sha256Hex(bytes);
  }
  /// A digest reported for what the worker wrote, then the file replaced after it.
  void replaced(const std::string& name, std::vector<float> values) {
    candidate(name, {9, 9, 9});
    std::ofstream(dir_.path() / "cand" / name, std::ios::binary)
        << test::packBytes({test::floats(std::move(values))});
  }

  Observations run(int trials, const nlohmann::json& timedFiles = nlohmann::json::object()) {
    Observations o;
    o.referenceFacts = {{"timing_sets", timedFiles.size()}};
    o.candidateFacts = {{"files", digests_}, {"timing", {{"checked", {{"files", timedFiles}}}}}};
    compareOutputs(dir_.path(), trials, ToleranceTable{}, o);
    return o;
  }

  test::TempDir dir_;
  nlohmann::json digests_ = nlohmann::json::object();
};

TEST_F(CompareOutputs, StaleTrialsReplacedFilesAndEveryComparison) {
  for (int k = 0; k < 3; ++k) {
    const float f = static_cast<float>(k);
    reference("expected_" + std::to_string(k) + ".ctp", {1 + f, 2 + f, 3 + f});
  }
  candidate("actual_0.ctp", {1, 2, 3});
  candidate("actual_1.ctp", {1, 2, 3});  // trial 0's output again: stale
  candidate("actual_2.ctp", {3, 4, 5});
  // Two timing sets: set 0 with two distinct kept outputs (one wrong) and the outside check's,
  // set 1 with one whose file was replaced.
  reference("expected_timing_0.ctp", {5, 6, 7});
  reference("expected_timing_1.ctp", {8, 9, 10});
  candidate("timed_0_0.ctp", {5, 6, 7});
  candidate("timed_0_1.ctp", {5, 6, 8});
  candidate("timed_check.ctp", {5, 6, 7});
  replaced("timed_1_0.ctp", {8, 9, 10});
  reference("expected_alt.ctp", {7, 8});            // and no actual_alt
  candidate("actual_repeat.ctp", {1, 2, 3.0001f});  // within tolerance, not within rounding
  candidate("actual_noop.ctp", {1, 2, 3}, false);   // its digest never reported
  reference("inputs_0.ctp", {4, 5}, "inputs");
  candidate("inputs_after_0.ctp", {4, 6});

  const Observations o = run(3, {{"0", 2}, {"1", 1}});
  ASSERT_EQ(o.trials.size(), 3u);
  EXPECT_TRUE(o.trials[0] && o.trials[0]->ok());
  EXPECT_TRUE(o.trials[1] && !o.trials[1]->ok());
  EXPECT_TRUE(o.trials[2] && o.trials[2]->ok());
  ASSERT_EQ(o.timed.size(), 4u);  // timed_0_0, timed_0_1, timed_check, timed_1_0
  EXPECT_TRUE(o.timed[0] && o.timed[0]->ok());
  EXPECT_TRUE(o.timed[1] && !o.timed[1]->ok());
  EXPECT_TRUE(o.timed[2] && o.timed[2]->ok());
  EXPECT_FALSE(o.timed[3]);
  EXPECT_FALSE(o.alt);
  ASSERT_TRUE(o.repeat);
  EXPECT_FALSE(o.repeat->ok());
  EXPECT_FALSE(o.noop);
  EXPECT_EQ(o.inputsMutated, true);
  EXPECT_FALSE(o.candidateOutputsConstant);
  EXPECT_TRUE(o.referenceOutputsVary);
  EXPECT_EQ(o.staleTrials, (std::vector<std::pair<int, int>>{{1, 0}}));
  EXPECT_FALSE(o.degeneracy.degenerate);
  EXPECT_EQ(o.replacedFiles, (std::vector<std::string>{"actual_noop.ctp", "timed_1_0.ctp"}));
}

TEST_F(CompareOutputs, ConstantOutputsAndReplacedTrialsInTrialOrder) {
  for (int k = 0; k < 4; ++k) {
    const float f = static_cast<float>(k);
    reference("expected_" + std::to_string(k) + ".ctp", {1 + f, 2 * f, 3});
  }
  candidate("actual_0.ctp", {1, 0, 3});
  replaced("actual_1.ctp", {1, 0, 3});
  candidate("actual_2.ctp", {1, 0, 3});
  replaced("actual_3.ctp", {1, 0, 3});
  Observations o = run(4);
  EXPECT_FALSE(o.candidateOutputsConstant);  // two trials have no output to compare
  EXPECT_EQ(o.replacedFiles, (std::vector<std::string>{"actual_1.ctp", "actual_3.ctp"}));
  EXPECT_EQ(o.staleTrials, (std::vector<std::pair<int, int>>{{2, 0}}));
  candidate("actual_1.ctp", {1, 0, 3});
  candidate("actual_3.ctp", {1, 0, 3});
  o = run(4);
  EXPECT_TRUE(o.candidateOutputsConstant);
  EXPECT_TRUE(o.referenceOutputsVary);
  EXPECT_TRUE(o.staleTrials.empty());  // not asked once every output is the same
  EXPECT_TRUE(o.replacedFiles.empty());
}

TEST_F(CompareOutputs, WithoutTrialZerosOutputTheLaterFilesAreNotRead) {
  reference("expected_0.ctp", {1, 2});
  reference("expected_1.ctp", {2, 3});
  candidate("actual_1.ctp", {2, 3});
  replaced("actual_repeat.ctp", {1, 2});
  replaced("actual_alt.ctp", {1, 2});
  reference("expected_alt.ctp", {1, 2});
  const Observations o = run(2);
  EXPECT_FALSE(o.trials[0]);
  EXPECT_TRUE(o.trials[1] && o.trials[1]->ok());
  EXPECT_FALSE(o.repeat);
  EXPECT_FALSE(o.inputsMutated);
  EXPECT_FALSE(o.referenceOutputsVary);  // not asked without trial 0
  EXPECT_EQ(o.replacedFiles, (std::vector<std::string>{"actual_alt.ctp"}));
}

TEST_F(CompareOutputs, LoadingAheadWithNoRoomStillReadsEveryFileInOrder) {
  candidate("a.ctp", {1});
  replaced("b.ctp", {2});
  candidate("c.ctp", {3});
  const JobPacks packs(dir_.path(), {{"files", digests_}});
  std::vector<PackFile> files = {packs.candidate("a.ctp"), packs.candidate("b.ctp"),
                                 packs.candidate("missing.ctp"), packs.candidate("c.ctp")};
  EXPECT_GT(files[0].bytes, 0u);
  EXPECT_EQ(files[2].bytes, 0u);
  LoadAhead ahead(packs, files, 0, 1000);
  auto a = ahead.next();
  ASSERT_TRUE(a.pack);
  EXPECT_EQ(a.pack->tensors()[0].at(0), 1);
  ahead.release(a.bytes);
  const auto b = ahead.next();
  EXPECT_FALSE(b.pack);
  EXPECT_TRUE(b.replaced);
  const auto missing = ahead.next();
  EXPECT_FALSE(missing.pack);
  EXPECT_FALSE(missing.replaced);
  const auto c = ahead.next();
  ASSERT_TRUE(c.pack);
  EXPECT_EQ(c.pack->tensors()[0].at(0), 3);
  EXPECT_THROW(ahead.next(), std::logic_error);
}

}  // namespace
}  // namespace crucible
