#include <gtest/gtest.h>

#include "core/verify/evaluation.h"

namespace crucible {
namespace {

TEST(EvaluationJson, RoundTripKeepsEveryField) {
  Evaluation e;
  e.verdict = Verdict::Cheating;
  e.correct = true;
  e.speedup = 1.5;
  e.timing = {2.0, 1.0, std::nullopt};
  e.flags.push_back(makeFlag("input_mutation", "changed input 0", 12, {{"k", 1}}));
  e.flags.push_back(makeFlag("precision_downgrade", "fp16"));
  e.reward.preset = "tritonrl";
  e.reward.total = 0.0;
  e.reward.components = {{"valid", 0, ""}, {"code", 0, "code"}};
  e.backend = "interpret";
  e.device = "cpu";
  e.error = EvalError{"run", "boom", "candidate", 4};
  e.sandboxed = true;
  e.speedupSpread = SpeedupSpread{0.8, 3.1, true};
  e.compileSpeedupSpread = SpeedupSpread{0.4, 0.6, false};
  e.timing.threads = 1;
  e.timing.rounds = 5;
  e.timing.interleaved = true;
  e.plan = "think";
  e.stageSeconds = {{"static", 0.5}, {"candidate", 2.25}, {"candidate/candidate-timing", 1.5}};
  e.facts = {{"static", {{"x", 1}}}};
  const nlohmann::json j = e;
  EXPECT_EQ(j["stage_seconds"][1]["stage"], "candidate");
  EXPECT_EQ(j["verdict"], "cheating");
  EXPECT_EQ(j["flags"][0]["severity"], "cheat");
  EXPECT_EQ(j["flags"][1]["severity"], "warning");
  EXPECT_TRUE(j["timing"]["compile_reference_ms"].is_null());
  EXPECT_TRUE(j["reward"]["components"].is_object());
  EXPECT_EQ(j["speedup_spread"]["noisy"], true);
  EXPECT_EQ(j["timing"]["threads"], 1);
  EXPECT_EQ(j["timing"]["rounds"], 5);
  EXPECT_EQ(j["timing"]["interleaved"], true);
  EXPECT_EQ(j["compile_speedup_spread"]["low"], 0.4);
  const Evaluation back = j.get<Evaluation>();
  EXPECT_EQ(back, e);
}

TEST(EvaluationJson, VerdictsAndExitCodes) {
  EXPECT_EQ(exitCodeFor(Verdict::Verified), 0);
  EXPECT_EQ(exitCodeFor(Verdict::Incorrect), 1);
  EXPECT_EQ(exitCodeFor(Verdict::Cheating), 1);
  EXPECT_EQ(exitCodeFor(Verdict::Invalid), 1);
  EXPECT_EQ(exitCodeFor(Verdict::Error), 3);
  for (auto v : {Verdict::Verified, Verdict::Incorrect, Verdict::Cheating, Verdict::Invalid,
                 Verdict::Error}) {
    EXPECT_EQ(verdictFromString(toString(v)), v);
  }
  EXPECT_FALSE(verdictFromString("maybe"));
}

TEST(EvaluationJson, CatalogueIsCompleteAndStable) {
  EXPECT_EQ(flagCatalogue().size(), 25u);
  EXPECT_EQ(findFlag("unpaired_timing")->severity, Severity::Warning);
  EXPECT_EQ(findFlag("contended_timing")->severity, Severity::Warning);
  EXPECT_EQ(findFlag("unconfirmed_timing")->severity, Severity::Warning);
  EXPECT_EQ(findFlag("impossible_timing")->severity, Severity::Cheat);
  EXPECT_EQ(findFlag("degenerate_reference")->severity, Severity::Warning);
  EXPECT_EQ(findFlag("sandbox_violation")->severity, Severity::Cheat);
  EXPECT_THROW(makeFlag("not_a_flag", ""), std::invalid_argument);
}

}  // namespace
}  // namespace crucible
