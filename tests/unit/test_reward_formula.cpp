#include <gtest/gtest.h>

#include "core/verify/reward_formula.h"

using namespace crucible;

namespace {
RewardInputs fastAndCorrect() {
  return RewardInputs{1, 1, 1, 1, 3.4};
}
}  // namespace

TEST(RewardFormula, SubstitutesKnownNamesOnly) {
  EXPECT_EQ(substituteValues("alpha * r_speed + r_correct",
                             {{"alpha", 0.1}, {"r_speed", 2}, {"r_correct", 1}}),
            "0.1 * 2 + 1");
  EXPECT_EQ(
      substituteValues("min(speedup, speed_clip) * 1e3", {{"speedup", 3.4}, {"speed_clip", 2}}),
      "min(3.4, 2) * 1e3");
  EXPECT_EQ(substituteValues("unknown + x_1", {{"x", 5}}), "unknown + x_1");
}

TEST(RewardFormula, ShowsEveryComponentWithTheCandidatesNumbers) {
  const RewardPreset* preset = findRewardPreset("tritonrl");
  ASSERT_NE(preset, nullptr);
  const Reward reward = preset->evaluate(fastAndCorrect());
  const auto lines = rewardFormula(*preset, reward);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].name, "valid");
  EXPECT_EQ(lines[0].substituted, "1 * 1");
  EXPECT_EQ(lines[2].name, "r_speed");
  EXPECT_EQ(lines[2].substituted, "1 * 1 * min(3.4, 2)");
  EXPECT_EQ(lines[2].value, "2");
  EXPECT_EQ(lines[2].part, "plan");
  EXPECT_EQ(lines[3].name, "total");
  EXPECT_EQ(lines[3].expression, "alpha * r_speed + r_correct");
  EXPECT_EQ(lines[3].substituted, "0.1 * 2 + 1");
  EXPECT_EQ(lines[3].value, "1.2");
}

TEST(RewardFormula, AnotherPresetRescoresFromTheKeptInputs) {
  const Reward tritonrl = findRewardPreset("tritonrl")->evaluate(fastAndCorrect());
  const auto kevin = rescoreReward(tritonrl, *findRewardPreset("kevin"));
  ASSERT_TRUE(kevin.has_value());
  EXPECT_EQ(kevin->preset, "kevin");
  ASSERT_TRUE(kevin->total.has_value());
  EXPECT_NEAR(*kevin->total, 0.3 + 3.4, 1e-12);
  // An infrastructure failure keeps no total under any preset.
  Reward failed = tritonrl;
  failed.total.reset();
  EXPECT_FALSE(rescoreReward(failed, *findRewardPreset("kevin"))->total.has_value());
  // An evaluation stored before the inputs were kept cannot be rescored.
  Reward old = tritonrl;
  old.inputs.reset();
  EXPECT_FALSE(rescoreReward(old, *findRewardPreset("kevin")).has_value());
}

TEST(RewardFormula, InputsRoundTripThroughJsonAndMayBeAbsent) {
  const Reward reward = findRewardPreset("drtriton")->evaluate(fastAndCorrect());
  const nlohmann::json j = reward;
  EXPECT_EQ(j["inputs"]["speedup"], 3.4);
  EXPECT_EQ(j.get<Reward>(), reward);
  nlohmann::json old = j;
  old.erase("inputs");
  EXPECT_FALSE(old.get<Reward>().inputs.has_value());
  old["inputs"] = {{"syntax", 1}};
  EXPECT_THROW(old.get<Reward>(), std::invalid_argument);
}
