#include <gtest/gtest.h>

#include "core/verify/report_text.h"

namespace crucible {
namespace {

Evaluation timedInTurns() {
  Evaluation e;
  e.verdict = Verdict::Verified;
  e.correct = true;
  e.speedup = 2.0;
  e.speedupSpread = SpeedupSpread{1.8, 2.2, false};
  e.timing.referenceMs = 2.0;
  e.timing.candidateMs = 1.0;
  e.timing.compileReferenceMs = 1.5;
  e.compileSpeedupSpread = SpeedupSpread{0.6, 2.4, true};
  e.timing.rounds = 5;
  e.timing.interleaved = true;
  return e;
}

TEST(ReportText, BothSpeedupsCarryTheirRanges) {
  const auto e = timedInTurns();
  EXPECT_EQ(speedupSummary(e), "2x (1.8-2.2x)");
  EXPECT_EQ(compileSpeedupSummary(e), "noisy: 0.6-2.4x (median 1.5x)");
  Evaluation none = e;
  none.timing.compileReferenceMs.reset();
  EXPECT_EQ(compileSpeedupSummary(none), "n/a");
}

TEST(ReportText, TheTextSaysHowTheSidesWereTimed) {
  auto e = timedInTurns();
  std::string text = renderEvaluationText(e);
  EXPECT_NE(text.find("5 rounds in turns"), std::string::npos) << text;
  EXPECT_NE(text.find("vs compile noisy: 0.6-2.4x"), std::string::npos) << text;
  e.timing.interleaved = false;
  text = renderEvaluationText(e);
  EXPECT_NE(text.find("5 rounds NOT in turns"), std::string::npos) << text;
}

}  // namespace
}  // namespace crucible
