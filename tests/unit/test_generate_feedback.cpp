// What a refinement round tells the model (feedback.h) and which candidate wins or is refined
// (selection.h).

#include <gtest/gtest.h>

#include "core/generate/feedback.h"
#include "core/generate/selection.h"

namespace crucible::generate {
namespace {

using nlohmann::json;

Evaluation incorrectEvaluation() {
  Evaluation e;
  e.verdict = Verdict::Incorrect;
  e.backend = "interpret";
  json tensor = {{"index", 0},
                 {"expected", "float32 [32, 200]"},
                 {"actual", "float32 [32, 200]"},
                 {"ok", false},
                 {"elements", 6400},
                 {"mismatches", 6400},
                 {"poisoned", 0},
                 {"non_finite", 0},
                 {"max_abs_error", 0.25},
                 {"max_rel_error", 1.5},
                 {"mean_abs_error", 0.004},
                 {"first_mismatch", 3}};
  json failing = {{"ok", false}, {"structure_match", true}, {"tensors", json::array({tensor})}};
  e.correctness = {
      {"trials", json::array({failing, failing, {{"ok", true}}})},
      {"alt",
       {{"ok", false}, {"structure_match", false}, {"structure_note", "2 outputs, expected 1"}}}};
  e.flags.push_back(makeFlag("nondeterministic_output", "runs differ by 1e-3", 14));
  e.timing = Timing{0.5, 2.0, std::nullopt};
  return e;
}

TEST(Feedback, IncorrectCandidateGetsMismatchStatisticsFlagsAndTiming) {
  const std::string text = describeFindings(incorrectEvaluation());
  EXPECT_EQ(text,
            "Verdict: incorrect (the outputs do not match the reference).\n"
            "Correctness: 1 of 3 trials with fresh random inputs matched the reference.\n"
            "Trial 0, output 0: 6400 of 6400 elements differ (max abs error 0.25, max rel error "
            "1.5, mean abs error 0.004), first at flat index 3\n"
            "With another batch size: the outputs have the wrong structure: 2 outputs, expected 1\n"
            "Flags:\n"
            "- nondeterministic_output (warning), line 14: runs differ by 1e-3\n"
            "Timing on interpret: reference 0.5 ms, candidate 2 ms.");
}

TEST(Feedback, ErrorsAreShortenedToTheirEndAndShapesAreNamed) {
  Evaluation e;
  e.verdict = Verdict::Incorrect;
  e.error = EvalError{"run", std::string(5000, 'x') + " IndexError: out of range", "candidate", 27};
  const std::string text = describeFindings(e);
  EXPECT_NE(text.find("Error (run, line 27): ..."), std::string::npos) << text;
  EXPECT_NE(text.find("IndexError: out of range"), std::string::npos);
  EXPECT_LT(text.size(), 1700u);

  Evaluation shape;
  shape.verdict = Verdict::Incorrect;
  shape.correctness = {
      {"trials", json::array({{{"ok", false},
                               {"tensors", json::array({{{"index", 0},
                                                         {"ok", false},
                                                         {"expected", "float32 [32, 200]"},
                                                         {"actual", "float32 [200, 32]"}}})}}})}};
  EXPECT_NE(describeFindings(shape).find(
                "Trial 0, output 0: expected float32 [32, 200], got float32 [200, 32]"),
            std::string::npos);
}

TEST(Feedback, VerifiedCandidateGetsItsSpeedup) {
  Evaluation e;
  e.verdict = Verdict::Verified;
  e.correct = true;
  e.backend = "cuda";
  e.speedup = 1.25;
  e.timing = Timing{1.0, 0.8, std::nullopt};
  EXPECT_EQ(describeFindings(e),
            "Verdict: verified (the outputs match the reference and no cheating was found).\n"
            "Timing on cuda: reference 1 ms, candidate 0.8 ms, speedup 1.25x.");
}

CandidateResult result(std::int64_t id, std::optional<Verdict> verdict,
                       std::optional<double> speedup = std::nullopt, std::string blame = "") {
  CandidateResult r;
  r.id = id;
  if (verdict) {
    Evaluation e;
    e.verdict = *verdict;
    e.speedup = speedup;
    if (!blame.empty()) e.error = EvalError{"run", "failed", blame, std::nullopt};
    r.evaluation = e;
  }
  return r;
}

TEST(Selection, FastestVerifiedWinsAndTiesGoToTheEarliest) {
  std::vector<CandidateResult> all = {
      result(1, Verdict::Incorrect),     result(2, Verdict::Verified),
      result(3, Verdict::Verified, 1.5), result(4, Verdict::Cheating, 9.0),
      result(5, Verdict::Verified, 1.5), result(6, std::nullopt)};
  EXPECT_EQ(fastestVerified(all), 2u);  // candidate 3
  EXPECT_EQ(candidateToRefine(all), 2u);
  all.resize(2);
  EXPECT_EQ(fastestVerified(all), 1u);  // verified without a timing still counts
  all.resize(1);
  EXPECT_EQ(fastestVerified(all), std::nullopt);
}

TEST(Selection, ANoisyMeasurementCountsForItsSlowEnd) {
  // 3.1x at the median but anywhere from 0.7x: the steady 1.9x is the better kernel, as the
  // reward counts them.
  std::vector<CandidateResult> all = {result(1, Verdict::Verified, 3.1),
                                      result(2, Verdict::Verified, 1.9)};
  all[0].evaluation->speedupSpread = SpeedupSpread{0.7, 3.7, true};
  all[1].evaluation->speedupSpread = SpeedupSpread{1.8, 2.0, false};
  EXPECT_EQ(fastestVerified(all), 1u);
  all[0].evaluation->speedupSpread = SpeedupSpread{2.9, 3.3, false};
  EXPECT_EQ(fastestVerified(all), 0u);
}

TEST(Selection, WithoutAVerifiedOneRefineTheNearestToRightAndLatest) {
  std::vector<CandidateResult> all = {result(1, Verdict::Invalid), result(2, Verdict::Incorrect),
                                      result(3, Verdict::Cheating), result(4, Verdict::Incorrect),
                                      result(5, Verdict::Error, std::nullopt, "infrastructure")};
  EXPECT_EQ(candidateToRefine(all), 3u);  // the later incorrect one
  const std::vector<CandidateResult> infra = {
      result(1, Verdict::Error, std::nullopt, "infrastructure"), result(2, std::nullopt)};
  EXPECT_EQ(candidateToRefine(infra), std::nullopt);
}

}  // namespace
}  // namespace crucible::generate
