// The benchmark's metrics against values worked out by hand: fast_p over all tasks with a strict
// threshold (KernelBench), against torch.compile, the geometric mean over correct tasks, pass@k
// (Chen et al.'s estimator), and the JSON round trips of rows and metrics.

#include <gtest/gtest.h>

#include <cmath>

#include "core/bench/metrics.h"
#include "tests/unit/bench_samples.h"

namespace crucible::bench {
namespace {

using crucible::test::sample;

TaskResult task(const std::string& id, std::vector<SampleResult> samples) {
  TaskResult t;
  t.id = id;
  t.samples = std::move(samples);
  t.chosen = keptSample(t.samples);
  return t;
}

// A: 2.0x (0.8x against torch.compile); B: 1.5x; C: 0.5x; D: incorrect but "fast"; E: nothing.
std::vector<TaskResult> fiveTasks() {
  TaskResult e;
  e.id = "E";
  e.error = "generator: down";
  return {task("A", {sample(true, 10, 5, 4)}), task("B", {sample(true, 3, 2)}),
          task("C", {sample(true, 1, 2)}), task("D", {sample(false, 1, 0.1)}), e};
}

TEST(BenchMetrics, FastPCountsCorrectTasksStrictlyAboveTheThresholdOverAllTasks) {
  const auto tasks = fiveTasks();
  EXPECT_DOUBLE_EQ(fastP(tasks, 0), 3.0 / 5);
  EXPECT_DOUBLE_EQ(fastP(tasks, 0.5), 2.0 / 5);  // C's 0.5x is not > 0.5
  EXPECT_DOUBLE_EQ(fastP(tasks, 1), 2.0 / 5);
  EXPECT_DOUBLE_EQ(fastP(tasks, 1.5), 1.0 / 5);  // B's 1.5x is not > 1.5
  EXPECT_DOUBLE_EQ(fastP(tasks, 2), 0.0);        // A's 2.0x is not > 2
  EXPECT_DOUBLE_EQ(fastP({}, 1), 0.0);
}

TEST(BenchMetrics, SummaryOfFiveTasks) {
  const Metrics m = computeMetrics(fiveTasks(), 1);
  EXPECT_EQ(m.tasks, 5);
  EXPECT_EQ(m.correct, 3);
  EXPECT_DOUBLE_EQ(m.correctRate, 0.6);
  const std::map<std::string, double> expected = {
      {"0", 0.6}, {"0.5", 0.4}, {"1", 0.4}, {"1.5", 0.2}, {"2", 0.0}};
  EXPECT_EQ(m.fastP, expected);
  ASSERT_TRUE(m.geomeanSpeedup);
  EXPECT_NEAR(*m.geomeanSpeedup, std::cbrt(2.0 * 1.5 * 0.5), 1e-12);
  // Only A has a torch.compile time: 4 ms / 5 ms = 0.8x.
  EXPECT_EQ(m.compileTimed, 1);
  ASSERT_TRUE(m.fastPVsCompile);
  EXPECT_DOUBLE_EQ(m.fastPVsCompile->at("0"), 0.2);
  EXPECT_DOUBLE_EQ(m.fastPVsCompile->at("0.5"), 0.2);
  EXPECT_DOUBLE_EQ(m.fastPVsCompile->at("1"), 0.0);
  EXPECT_NEAR(*m.geomeanSpeedupVsCompile, 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(m.passAtK.at("1"), 0.6);
}

TEST(BenchMetrics, WithoutTorchCompileTimesTheComparisonIsNull) {
  const Metrics m = computeMetrics({task("B", {sample(true, 3, 2)})}, 1);
  EXPECT_FALSE(m.fastPVsCompile);
  EXPECT_FALSE(m.geomeanSpeedupVsCompile);
  EXPECT_TRUE(nlohmann::json(m)["fast_p_vs_compile"].is_null());
}

TEST(BenchMetrics, NoCorrectTaskHasNoGeometricMean) {
  const Metrics m = computeMetrics({task("D", {sample(false, 1, 0.1)})}, 1);
  EXPECT_FALSE(m.geomeanSpeedup);
  EXPECT_DOUBLE_EQ(m.correctRate, 0);
}

TEST(BenchMetrics, PassAtKIsChensUnbiasedEstimator) {
  EXPECT_DOUBLE_EQ(passAtK(3, 1, 1), 1.0 / 3);
  EXPECT_NEAR(passAtK(3, 1, 2), 2.0 / 3, 1e-12);  // 1 - C(2,2)/C(3,2)
  EXPECT_DOUBLE_EQ(passAtK(3, 1, 3), 1.0);
  EXPECT_NEAR(passAtK(5, 2, 2), 0.7, 1e-12);                // 1 - C(3,2)/C(5,2) = 1 - 3/10
  EXPECT_NEAR(passAtK(10, 3, 5), 1.0 - 21.0 / 252, 1e-12);  // 1 - C(7,5)/C(10,5)
  EXPECT_DOUBLE_EQ(passAtK(10, 0, 5), 0.0);
  EXPECT_DOUBLE_EQ(passAtK(4, 4, 1), 1.0);
  // Fewer samples than k: k is lowered to n (KernelBench does the same).
  EXPECT_DOUBLE_EQ(passAtK(2, 0, 3), 0.0);
  EXPECT_DOUBLE_EQ(passAtK(2, 1, 3), 1.0);
  EXPECT_DOUBLE_EQ(passAtK(0, 0, 1), 0.0);
}

TEST(BenchMetrics, PassAtKIsAveragedOverTasks) {
  // Task 1: 3 samples, 1 correct; task 2: 3 samples, none correct.
  const auto tasks = std::vector<TaskResult>{
      task("1", {sample(false, 1, 1), sample(true, 1, 1), sample(false, 1, 1)}),
      task("2", {sample(false, 1, 1), sample(false, 1, 1), sample(false, 1, 1)})};
  const Metrics m = computeMetrics(tasks, 3);
  EXPECT_EQ(passAtKValues(3), (std::vector<int>{1, 2, 3}));
  EXPECT_NEAR(m.passAtK.at("1"), (1.0 / 3) / 2, 1e-12);
  EXPECT_NEAR(m.passAtK.at("2"), (2.0 / 3) / 2, 1e-12);
  EXPECT_NEAR(m.passAtK.at("3"), 0.5, 1e-12);
  EXPECT_EQ(passAtKValues(12), (std::vector<int>{1, 2, 5, 10, 12}));
  EXPECT_EQ(passAtKValues(1), (std::vector<int>{1}));
}

TEST(BenchMetrics, TheKeptSampleIsTheFastestCorrectOne) {
  const std::vector<SampleResult> samples = {sample(false, 1, 0.1), sample(true, 1, 1),
                                             sample(true, 1, 0.5), sample(true, 1, 0.8)};
  EXPECT_EQ(keptSample(samples), 2u);
  EXPECT_EQ(keptSample({sample(false, 1, 1), sample(false, 1, 2)}), 0u);
  EXPECT_FALSE(keptSample({}));
}

TEST(BenchMetrics, OnlyRowsWithAKernelAndNoMachineFailureAreResumed) {
  auto tasks = fiveTasks();
  EXPECT_TRUE(tasks[0].resumable());
  EXPECT_TRUE(tasks[3].resumable());   // incorrect is a result
  EXPECT_FALSE(tasks[4].resumable());  // no samples: the generator failed
  tasks[3].samples[0].infrastructure = true;
  EXPECT_FALSE(tasks[3].resumable());
}

TEST(BenchMetrics, ThresholdKeysAreKernelBenchs) {
  std::vector<std::string> keys;
  for (double p : kFastPThresholds) keys.push_back(thresholdKey(p));
  EXPECT_EQ(keys, (std::vector<std::string>{"0", "0.5", "1", "1.5", "2"}));
}

TEST(BenchMetrics, ASampleKeepsTheWholeStagesOfItsVerificationTime) {
  Evaluation e;
  e.verdict = Verdict::Verified;
  e.stageSeconds = {{"static", 0.1}, {"candidate", 9}, {"candidate/candidate-timing", 7}};
  const SampleResult s = sampleFrom(e, 3);
  EXPECT_EQ(s.stageSeconds, (std::vector<StageTime>{{"static", 0.1}, {"candidate", 9}}));
}

TEST(BenchMetrics, RowsAndMetricsRoundTripThroughJson) {
  auto tasks = fiveTasks();
  tasks[0].file = "level1/1_A.py";
  tasks[0].level = "1";
  tasks[0].problemId = 1;
  tasks[0].sessionId = 7;
  tasks[0].samples[0].candidateId = 12;
  tasks[0].samples[0].flags = {"slow_path"};
  tasks[0].samples[0].stageSeconds = {{"reference", 3.5}, {"candidate", 1.25}};
  tasks[0].seconds = 2.5;
  for (const auto& t : tasks) {
    const nlohmann::json j = t;
    EXPECT_EQ(j.get<TaskResult>(), t) << j.dump();
  }
  const nlohmann::json row = tasks[0];
  EXPECT_DOUBLE_EQ(row["speedup"].get<double>(), 2.0);
  EXPECT_TRUE(row["correct"].get<bool>());
  EXPECT_TRUE(nlohmann::json(tasks[4])["verdict"].is_null());

  const Metrics m = computeMetrics(tasks, 1);
  EXPECT_EQ(nlohmann::json(m).get<Metrics>(), m);
}

}  // namespace
}  // namespace crucible::bench

namespace crucible::bench {
namespace {

TEST(BenchMetrics, CurveAndHistogramForThePlots) {
  const auto curve = fastPCurve(fiveTasks(), Baseline::Eager, 2.0, 5);
  ASSERT_EQ(curve.size(), 5u);
  EXPECT_DOUBLE_EQ(curve[2].first, 1.0);
  EXPECT_DOUBLE_EQ(curve[2].second, 0.4);
  EXPECT_DOUBLE_EQ(curve[4].second, 0.0);

  // One octave each side, two bins per octave: [0.5, 0.707), [0.707, 1), [1, 1.414), [1.414, 2).
  const auto bins = speedupHistogram({0.1, 0.6, 1.0, 1.2, 1.9, 50}, 1, 2);
  ASSERT_EQ(bins.size(), 4u);
  EXPECT_DOUBLE_EQ(bins[0].low, 0.5);
  EXPECT_DOUBLE_EQ(bins[2].low, 1.0);
  EXPECT_EQ(bins[0].count, 2);  // 0.1 falls into the first bin
  EXPECT_EQ(bins[1].count, 0);
  EXPECT_EQ(bins[2].count, 2);
  EXPECT_EQ(bins[3].count, 2);  // 50 falls into the last bin
}

}  // namespace
}  // namespace crucible::bench
