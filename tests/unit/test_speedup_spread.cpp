#include <gtest/gtest.h>

#include "core/verify/speedup_spread.h"

namespace crucible {
namespace {

TEST(SpeedupSpread, QuantilesInterpolateBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2, 5}, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.25), 2);
  EXPECT_DOUBLE_EQ(quantile({1, 2}, 0.75), 1.75);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7);
}

TEST(SpeedupSpread, QuietSamplesGiveANarrowRangeAroundTheSpeedup) {
  const auto s = speedupSpread({2.0, 2.02, 1.98, 2.01, 1.99}, {1.0, 1.01, 0.99, 1.0, 1.02});
  ASSERT_TRUE(s);
  EXPECT_LT(s->low, 2.0);
  EXPECT_GT(s->high, 2.0);
  EXPECT_GT(s->low, 1.9);
  EXPECT_LT(s->high, 2.1);
  EXPECT_FALSE(s->noisy);
  EXPECT_DOUBLE_EQ(conservativeSpeedup(2.0, s), 2.0);
}

TEST(SpeedupSpread, OneTimeWithoutSamplesTakesTheReferencesRangeAndCannotTell) {
  const auto s = spreadOverOneTime({1.0, 2.0, 3.0}, 2.0);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->low, 0.75);
  EXPECT_DOUBLE_EQ(s->high, 1.25);
  EXPECT_TRUE(s->noisy);  // however narrow: the candidate's side is not known
  EXPECT_FALSE(spreadOverOneTime({1.0}, 2.0));
  EXPECT_FALSE(spreadOverOneTime({1.0, 2.0}, 0.0));
}

TEST(SpeedupSpread, ALoadedMachinesSamplesAreNoisyAndTheRewardTakesTheSlowEnd) {
  // The reference's samples range over 10x (threads fighting other work), the candidate's too.
  const auto s = speedupSpread({1, 2, 12, 15, 20, 3}, {0.5, 0.6, 4, 5, 0.7});
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->noisy);
  EXPECT_GT(s->high, kNoisySpreadRatio * s->low);
  EXPECT_DOUBLE_EQ(conservativeSpeedup(9.0, s), s->low);
  EXPECT_DOUBLE_EQ(conservativeSpeedup(0.1, s), 0.1);  // never above the median either
}

TEST(SpeedupSpread, TooFewSamplesGiveNoRange) {
  EXPECT_FALSE(speedupSpread({1.0}, {1.0, 2.0}));
  EXPECT_FALSE(speedupSpread({1.0, 2.0}, {0.0, -1.0}));
  EXPECT_DOUBLE_EQ(conservativeSpeedup(3.0, std::nullopt), 3.0);
}

}  // namespace
TEST(SpeedupSpread, RoundsThatDisagreeWidenTheRange) {
  // Quiet within each round; two of the candidate's five rounds ran under load.
  const auto rounds = roundSpread({{2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}},
                                  {{1, 1}, {3, 3}, {3, 3}, {1, 1}, {1, 1}});
  ASSERT_TRUE(rounds);
  EXPECT_DOUBLE_EQ(rounds->low, 2.0 / 3);
  EXPECT_DOUBLE_EQ(rounds->high, 2.0);
  EXPECT_TRUE(rounds->noisy);
  // One disturbed round among five does not decide the range.
  const auto one = roundSpread({{2}, {2}, {2}, {2}, {2}}, {{1}, {3}, {1}, {1}, {1}});
  ASSERT_TRUE(one);
  EXPECT_DOUBLE_EQ(one->low, 2.0);
  EXPECT_FALSE(one->noisy);
  const auto samples = speedupSpread({2, 2, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1.1});
  const auto both = widest(samples, rounds);
  ASSERT_TRUE(both);
  EXPECT_DOUBLE_EQ(both->low, rounds->low);
  EXPECT_DOUBLE_EQ(both->high, rounds->high);
  EXPECT_EQ(widest(std::nullopt, samples), samples);
  EXPECT_FALSE(roundSpread({{2}}, {{1}}));           // one round says nothing about the others
  EXPECT_FALSE(roundSpread({{2}, {}}, {{1}, {1}}));  // nor do rounds with one side missing
}

}  // namespace crucible
