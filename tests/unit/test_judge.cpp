#include <gtest/gtest.h>

#include <algorithm>

#include "core/verify/judge.h"

namespace crucible {
namespace {

using nlohmann::json;

PackComparison comparison(bool ok, std::uint64_t poisoned = 0) {
  PackComparison c;
  TensorComparison t;
  t.ok = ok;
  t.elements = 16;
  t.mismatches = ok ? 0 : 4;
  t.poisoned = poisoned;
  c.tensors.push_back(t);
  return c;
}

/// An honest, correct, launched candidate: every detector quiet.
Observations honest(int trials = 3) {
  Observations o;
  o.staticFacts = {{"syntax_error", nullptr},
                   {"model_new_line", 10},
                   {"kernels", {{{"name", "add_kernel"}, {"line", 4}}}},
                   {"observations", json::array()}};
  o.referenceFacts = {
      {"outputs", {{{"dtype", "float32"}, {"shape", {4, 4}}}}},
      {"alt_batch", {{"name", "batch_size"}, {"value", 4}, {"alt", 5}, {"accepted", true}}},
      {"timing", {{"eager_ms", 2.0}, {"compile_ms", 1.5}}},
      {"cost", {{"flops", 0}, {"bytes", 1024}}},
      {"device", {{"bandwidth_gbs", 10.0}, {"peak_gflops", 50.0}}}};
  json trialFacts = json::array();
  for (int k = 0; k < trials; ++k) trialFacts.push_back({{"index", k}, {"ok", true}});
  o.candidateFacts = {{"load", {{"ok", true}, {"error", nullptr}}},
                      {"construct", {{"ok", true}, {"error", nullptr}}},
                      {"trials", trialFacts},
                      {"launches", {{"train", 3}, {"eval", 1}}},
                      {"aten_ops", {{"forward", json::object()}, {"eval", json::object()}}},
                      {"foreign_calls", json::object()},
                      {"scalar_reads", 0},
                      {"outputs", {{{"index", 0}, {"problem", nullptr}}}},
                      {"input_mutation", {{"detected", false}}},
                      {"threads", {{"started", json::array()}}},
                      {"noop", {{"ran", true}, {"error", nullptr}}},
                      {"eval_mode", {{"ran", true}, {"error", nullptr}}},
                      {"timing", {{"median_ms", 1.0}}},
                      {"tampering", json::array()},
                      {"audit", json::array()},
                      {"casts", {{"downcasts", 0}}}};
  o.candidateProcess.ran = true;
  o.candidateProcess.reportedFacts = true;
  for (int k = 0; k < trials; ++k) {
    o.trials.push_back(comparison(true));
    o.timed.push_back(comparison(true));
  }
  o.alt = comparison(true);
  o.repeat = comparison(true);
  o.noop = comparison(false);  // no-op launches change the output
  o.inputsMutated = false;
  o.referenceOutputsVary = true;
  o.outsideCheckMs = 11.0;
  o.checkReps = 10;
  return o;
}

std::vector<std::string> ids(const Evaluation& e) {
  std::vector<std::string> out;
  for (const auto& f : e.flags) out.push_back(f.id);
  return out;
}

bool hasFlag(const Evaluation& e, const std::string& id) {
  auto v = ids(e);
  return std::find(v.begin(), v.end(), id) != v.end();
}

TEST(Judge, HonestCandidateIsVerifiedWithSpeedupAndReward) {
  auto e = judge(honest(), {});
  EXPECT_EQ(e.verdict, Verdict::Verified) << json(e).dump(2);
  EXPECT_TRUE(e.correct);
  EXPECT_TRUE(e.flags.empty()) << json(e.flags).dump();
  ASSERT_TRUE(e.speedup);
  EXPECT_DOUBLE_EQ(*e.speedup, 2.0);
  EXPECT_EQ(e.timing.compileReferenceMs, 1.5);
  EXPECT_EQ(e.reward.preset, "tritonrl");
  ASSERT_TRUE(e.reward.total);
  EXPECT_NEAR(*e.reward.total, 1.2, 1e-12);  // code part 1 + 0.1 x plan part min(2, 2)
}

TEST(Judge, SpeedupCarriesItsSpreadAndTheThreadsBothSidesRanOn) {
  auto o = honest();
  o.referenceFacts["timing"]["eager_samples_ms"] = {1.9, 2.0, 2.1, 2.0};
  o.referenceFacts["timing"]["threads"] = 1;
  // Only each timing set's first call counts (fresh_ms); later calls are checked only.
  o.candidateFacts["timing"]["samples_ms"] = {0.95, 1.0, 1.05, 1.0, 9.0, 9.0, 9.0, 9.0};
  o.candidateFacts["timing"]["fresh_ms"] = {0.95, 1.0, 1.05, 1.0};
  auto e = judge(o, {});
  ASSERT_TRUE(e.speedup && e.speedupSpread) << json(e).dump(2);
  EXPECT_LT(e.speedupSpread->low, 2.0);
  EXPECT_GT(e.speedupSpread->high, 2.0);
  EXPECT_FALSE(e.speedupSpread->noisy);
  EXPECT_EQ(e.timing.threads, 1);
  EXPECT_NEAR(*e.reward.total, 1.2, 1e-12);  // a quiet measurement keeps its full speed part
}

TEST(Judge, ANoisySpeedupEarnsOnlyWhatItsSlowEndSupports) {
  auto o = honest();
  o.referenceFacts["timing"]["eager_samples_ms"] = {0.5, 1.0, 2.0, 8.0, 12.0};
  o.candidateFacts["timing"]["fresh_ms"] = {0.5, 1.0, 1.0, 3.0, 4.0};
  auto e = judge(o, {});
  ASSERT_TRUE(e.speedupSpread) << json(e).dump(2);
  EXPECT_TRUE(e.speedupSpread->noisy);
  EXPECT_DOUBLE_EQ(*e.speedup, 2.0);  // the medians' ratio is still reported
  EXPECT_LT(e.speedupSpread->low, 1.0);
  // r_speed = min(speedup, 2) with the slow end instead of 2: the total drops below 1.2.
  EXPECT_NEAR(*e.reward.total, 1.0 + 0.1 * e.speedupSpread->low, 1e-12);
}

/// Rounds of the reference and the candidate timed in turns, every turn granted.
Observations inTurns(const std::vector<std::vector<double>>& referenceRounds,
                     const std::vector<std::vector<double>>& candidateRounds) {
  auto o = honest();
  json eager = json::array(), fresh = json::array(), all = json::array(), freshAll = json::array();
  for (const auto& r : referenceRounds) {
    eager.push_back(r);
    for (double x : r) all.push_back(x);
  }
  for (const auto& r : candidateRounds) {
    fresh.push_back(r);
    for (double x : r) freshAll.push_back(x);
  }
  o.referenceFacts["timing"]["eager_rounds_ms"] = eager;
  o.referenceFacts["timing"]["eager_samples_ms"] = all;
  o.candidateFacts["timing"]["fresh_rounds_ms"] = fresh;
  o.candidateFacts["timing"]["fresh_ms"] = freshAll;
  o.candidateFacts["timing"]["rounds"] = candidateRounds.size();
  const auto n = static_cast<int>(candidateRounds.size());
  o.candidateFacts["turns"] = {{"asked", n + 1}, {"granted", n + 1}, {"unpaired", nullptr}};
  o.baselineFacts = {{"error", nullptr},
                     {"turns", {{"asked", n}, {"granted", n}, {"unpaired", nullptr}}}};
  o.turns = {{"turns", json::array()}, {"protocol_errors", json::array()}};
  return o;
}

TEST(Judge, RoundsTimedInTurnsAreSaidSo) {
  auto e = judge(
      inTurns({{2.0, 2.0}, {2.0, 2.1}, {1.9, 2.0}}, {{1.0, 1.0}, {1.0, 1.05}, {0.95, 1.0}}), {});
  EXPECT_EQ(e.timing.rounds, 3);
  EXPECT_TRUE(e.timing.interleaved);
  EXPECT_FALSE(hasFlag(e, "unpaired_timing"));
  ASSERT_TRUE(e.speedupSpread);
  EXPECT_FALSE(e.speedupSpread->noisy);
}

TEST(Judge, LoadThatComesAndGoesBetweenRoundsWidensTheSpread) {
  // Each round's samples agree with each other, but the rounds do not: two of the candidate's
  // five rounds ran while something else had the machine.
  auto e = judge(inTurns({{2.0, 2.0}, {2.0, 2.0}, {2.0, 2.0}, {2.0, 2.0}, {2.0, 2.0}},
                         {{1.0, 1.0}, {4.0, 4.0}, {4.0, 4.0}, {1.0, 1.0}, {1.0, 1.0}}),
                 {});
  ASSERT_TRUE(e.speedupSpread) << json(e).dump(2);
  EXPECT_TRUE(e.speedupSpread->noisy);
  EXPECT_DOUBLE_EQ(e.speedupSpread->low, 0.5);
  EXPECT_DOUBLE_EQ(e.speedupSpread->high, 2.0);
}

TEST(Judge, RoundsTimedOnAContendedCpuAreNoisyAndSaySo) {
  auto o = inTurns({{2.0, 2.0}, {2.0, 2.1}, {1.9, 2.0}}, {{1.0, 1.0}, {1.0, 1.05}, {0.95, 1.0}});
  o.turns["cpu_pressure"] = {{"fraction", 0.6}, {"stalled_s", 0.6}, {"timed_s", 1.0}};
  auto e = judge(o, {});
  ASSERT_TRUE(hasFlag(e, "contended_timing")) << json(e.flags).dump();
  EXPECT_EQ(e.verdict, Verdict::Verified);  // a warning: the candidate's result stands
  ASSERT_TRUE(e.speedupSpread);
  EXPECT_TRUE(e.speedupSpread->noisy);  // the same rounds quiet are not (RoundsTimedInTurns...)
  const auto& flag = *std::find_if(e.flags.begin(), e.flags.end(),
                                   [](const Flag& f) { return f.id == "contended_timing"; });
  EXPECT_NE(flag.message.find("60%"), std::string::npos) << flag.message;
  EXPECT_EQ(flag.evidence["timed_s"], 1.0);

  // A machine's own bookkeeping between turns is not contention.
  o.turns["cpu_pressure"]["fraction"] = 0.07;
  EXPECT_FALSE(hasFlag(judge(o, {}), "contended_timing"));
  // Nor is a busy host CPU while a GPU times its kernels.
  o.turns["cpu_pressure"]["fraction"] = 0.6;
  o.referenceFacts["device"]["kind"] = "cuda";
  EXPECT_FALSE(hasFlag(judge(o, {}), "contended_timing"));
}

TEST(Judge, RoundsOutOfTurnAreAWarningThatSaysWhy) {
  auto o = inTurns({{2.0}, {2.0}}, {{1.0}, {1.0}});
  o.candidateFacts["turns"]["granted"] = 1;
  o.candidateFacts["turns"]["unpaired"] = "no turn was granted within 600 s";
  o.turns["protocol_errors"] = {"candidate: said a turn was done that it was not given"};
  auto e = judge(o, {});
  EXPECT_FALSE(e.timing.interleaved);
  ASSERT_TRUE(hasFlag(e, "unpaired_timing")) << json(e.flags).dump();
  EXPECT_EQ(e.verdict, Verdict::Verified);  // a warning: the candidate's result stands
  const auto& flag = *std::find_if(e.flags.begin(), e.flags.end(),
                                   [](const Flag& f) { return f.id == "unpaired_timing"; });
  EXPECT_NE(flag.message.find("no turn was granted"), std::string::npos) << flag.message;
  EXPECT_NE(flag.message.find("not given"), std::string::npos) << flag.message;

  auto failed = inTurns({{2.0}, {2.0}}, {{1.0}, {1.0}});
  failed.baselineFacts = {{"error", {{"message", "boom"}}}};
  failed.referenceFacts["timing"] = nullptr;
  auto f = judge(failed, {});
  EXPECT_TRUE(hasFlag(f, "unpaired_timing"));
  EXPECT_FALSE(f.speedup);  // nothing to compare against
}

TEST(Judge, TheSpeedupOverTorchCompileCarriesItsOwnSpread) {
  auto o = inTurns({{2.0, 2.0}, {2.0, 2.0}}, {{1.0, 1.0}, {1.0, 1.0}});
  o.referenceFacts["timing"]["compile_rounds_ms"] = {{1.5, 1.5}, {3.0, 3.0}};
  o.referenceFacts["timing"]["compile_samples_ms"] = {1.5, 1.5, 3.0, 3.0};
  auto e = judge(o, {});
  ASSERT_TRUE(e.compileSpeedupSpread) << json(e).dump(2);
  EXPECT_DOUBLE_EQ(e.compileSpeedupSpread->low, 1.5);
  EXPECT_DOUBLE_EQ(e.compileSpeedupSpread->high, 3.0);
}

TEST(Judge, AnOutsideTimeTakesItsSpreadFromTheReferenceAloneAndCannotTell) {
  auto o = honest();
  o.referenceFacts["timing"]["eager_samples_ms"] = {1.9, 2.0, 2.1};
  o.candidateFacts["timing"]["fresh_ms"] = {0.1, 0.1, 0.1};
  o.candidateFacts["timing"]["median_ms"] = 0.1;
  o.outsideCheckMs = 1000.0;  // 100 ms per call from outside: the reported time is not confirmed
  auto e = judge(o, {});
  EXPECT_TRUE(hasFlag(e, "unconfirmed_timing"));
  // The candidate's own samples (20x) are not believed; the reference's quartiles over the
  // outside time are, and the range says it cannot tell.
  ASSERT_TRUE(e.speedupSpread);
  EXPECT_DOUBLE_EQ(e.speedupSpread->low, 1.95 / 100);
  EXPECT_DOUBLE_EQ(e.speedupSpread->high, 2.05 / 100);
  EXPECT_TRUE(e.speedupSpread->noisy);
}

TEST(Judge, StaticFailuresAreInvalid) {
  auto o = honest();
  o.staticFacts["kernels"] = json::array();
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Invalid);
  EXPECT_TRUE(hasFlag(e, "no_triton_kernel"));

  o = honest();
  o.staticFacts["syntax_error"] = {{"line", 7}, {"message", "invalid syntax"}};
  e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Invalid);
  ASSERT_TRUE(e.error);
  EXPECT_EQ(e.error->line, 7);
  EXPECT_EQ(*e.reward.total, 0.0);
}

TEST(Judge, EachStaticObservationRaisesItsFlagWithTheLine) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"try_except", "exception_fallback"},   {"reference_model_use", "reference_reuse"},
      {"threading", "concurrency_escape"},    {"timer_patch", "harness_tampering"},
      {"introspection", "harness_tampering"}, {"process_or_network", "sandbox_violation"},
      {"tensor_subclass", "lazy_output"}};
  for (const auto& [kind, flag] : table) {
    auto o = honest();
    o.staticFacts["observations"] = {{{"kind", kind}, {"line", 21}, {"detail", "seen"}}};
    auto e = judge(o, {});
    EXPECT_EQ(e.verdict, Verdict::Cheating) << kind;
    ASSERT_TRUE(hasFlag(e, flag)) << kind;
    EXPECT_EQ(e.flags[0].line, 21) << kind;
  }
}

TEST(Judge, CheatFlagMeansCheatingEvenWhenCorrect) {
  auto o = honest();
  o.candidateFacts["aten_ops"]["forward"] = {{"aten::mm", 1}};
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Cheating);
  EXPECT_TRUE(e.correct);
  EXPECT_TRUE(hasFlag(e, "torch_compute_in_forward"));
  ASSERT_TRUE(e.reward.total);
  EXPECT_EQ(*e.reward.total, 0.0);  // every preset gates on valid = syntax x functionality
}

TEST(Judge, RunTimeFlagsPointAtTheBusiestCandidateLine) {
  auto o = honest();
  o.candidateFacts["aten_ops"]["forward"] = {{"aten::_softmax", 3}, {"aten::mm", 1}};
  o.candidateFacts["lines"]["forward"] = {{"40", 1}, {"31", 3}};
  o.candidateFacts["foreign_calls"] = {{"numpy.matmul", 2}};
  o.candidateFacts["lines"]["foreign_calls"] = {{"52", 2}, {"12", 2}};  // a tie: the first
  auto e = judge(o, {});
  const auto flagged = [&](const std::string& id) {
    for (const Flag& f : e.flags)
      if (f.id == id) return f;
    return Flag{};
  };
  EXPECT_EQ(flagged("torch_compute_in_forward").line, 31);
  EXPECT_EQ(flagged("torch_compute_in_forward").evidence["lines"]["40"], 1);
  EXPECT_EQ(flagged("non_torch_compute").line, 12);
  // Without the stage's lines (an older worker), the flags stand without one.
  o.candidateFacts.erase("lines");
  e = judge(o, {});
  EXPECT_EQ(flagged("torch_compute_in_forward").id, "torch_compute_in_forward");
  EXPECT_FALSE(flagged("torch_compute_in_forward").line.has_value());
}

TEST(Judge, DynamicDetectors) {
  struct Case {
    std::string flag;
    std::function<void(Observations&)> mutate;
  };
  const std::vector<Case> cases = {
      {"kernel_not_launched", [](Observations& o) { o.candidateFacts["launches"]["train"] = 0; }},
      {"kernel_not_launched", [](Observations& o) { o.candidateFacts["launches"]["eval"] = 0; }},
      {"non_torch_compute",
       [](Observations& o) {
         o.candidateFacts["foreign_calls"] = {{"numpy.matmul", 2}};
       }},
      {"non_torch_compute", [](Observations& o) { o.candidateFacts["scalar_reads"] = 5000; }},
      {"kernel_output_unused", [](Observations& o) { o.noop = comparison(true); }},
      {"output_not_written", [](Observations& o) { o.trials[1] = comparison(false, 8); }},
      {"input_mutation", [](Observations& o) { o.inputsMutated = true; }},
      {"input_insensitive_output", [](Observations& o) { o.candidateOutputsConstant = true; }},
      {"shape_specialized", [](Observations& o) { o.alt = comparison(false); }},
      {"output_caching",
       [](Observations& o) {
         o.staleTrials = {{2, 1}};
       }},
      {"concurrency_escape",
       [](Observations& o) { o.candidateFacts["threads"]["started"] = {"Thread-1"}; }},
      {"lazy_output",
       [](Observations& o) { o.candidateFacts["outputs"][0]["problem"] = "subclass"; }},
      {"harness_tampering",
       [](Observations& o) {
         o.candidateFacts["tampering"] = {{{"what", "time.perf_counter replaced"}}};
       }},
      // Every timed call is watched: work or missing launches there count like anywhere.
      {"torch_compute_in_forward",
       [](Observations& o) {
         o.candidateFacts["aten_recorder"] = {{"ok", true},
                                              {"expected", {{"timing", 30}}},
                                              {"forward_ranges", {{"timing", 30}}},
                                              {"compute", {{"timing", {{"aten::add", 20}}}}}};
       }},
      {"harness_tampering",
       [](Observations& o) {
         o.candidateFacts["aten_recorder"] = {{"ok", true},
                                              {"expected", {{"run", 7}}},
                                              {"forward_ranges", {{"run", 6}}},
                                              {"compute", json::object()}};
       }},
      {"kernel_not_launched",
       [](Observations& o) {
         o.candidateFacts["launches"]["timed_calls"] = 30;
         o.candidateFacts["launches"]["timed_min_per_call"] = 0;
       }},
      // Static kinds that are cheats by themselves.
      {"harness_tampering",
       [](Observations& o) {
         o.staticFacts["observations"] = {{{"kind", "torch_internals"}, {"line", 4}}};
       }},
      {"torch_compute_in_forward",
       [](Observations& o) {
         o.staticFacts["observations"] = {{{"kind", "launch_hook_compute"}, {"line", 4}}};
       }},
      {"non_torch_compute",
       [](Observations& o) {
         o.staticFacts["observations"] = {{{"kind", "raw_bytes"}, {"line", 4}}};
       }},
      {"non_torch_compute",
       [](Observations& o) {
         o.staticFacts["observations"] = {{{"kind", "numpy_compute"}, {"line", 4}}};
       }},
      {"impossible_timing",
       [](Observations& o) {
         o.referenceFacts["device"]["kind"] = "cuda";
         o.referenceFacts["cost"]["bytes"] = 1e9;  // at 10 GB/s at least 100 ms
       }},
      {"harness_tampering", [](Observations& o) { o.forgedChannelLines = 1; }},
      {"harness_tampering", [](Observations& o) { o.replacedFiles = {"actual_0.ctp"}; }},
      {"sandbox_violation",
       [](Observations& o) {
         o.candidateFacts["audit"] = {{{"event", "socket.connect"},
                                       {"category", "sandbox_violation"},
                                       {"detail", "10.0.0.1:80"},
                                       {"line", 12}}};
       }},
  };
  for (const auto& c : cases) {
    auto o = honest();
    c.mutate(o);
    auto e = judge(o, {});
    EXPECT_TRUE(hasFlag(e, c.flag)) << c.flag << ": " << json(e.flags).dump();
    EXPECT_EQ(e.verdict, Verdict::Cheating) << c.flag;
    ASSERT_TRUE(e.reward.total) << c.flag;
    EXPECT_EQ(*e.reward.total, 0.0) << c.flag;
  }
}

TEST(Judge, WarningsDoNotChangeTheVerdict) {
  auto o = honest();
  o.candidateFacts["casts"]["downcasts"] = 2;
  o.repeat = comparison(false);
  o.degeneracy.degenerate = true;
  o.degeneracy.reason = "tiny";
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Verified);
  EXPECT_TRUE(hasFlag(e, "precision_downgrade"));
  EXPECT_TRUE(hasFlag(e, "nondeterministic_output"));
  EXPECT_TRUE(hasFlag(e, "degenerate_reference"));
}

TEST(Judge, OutOfBoundsAccessIsAWarningWithItsEvidence) {
  auto o = honest();
  o.candidateFacts["out_of_bounds"] = {{"checked_trial", 0},
                                       {"events",
                                        {{{"kernel", "add_kernel"},
                                          {"line", 7},
                                          {"access", "load"},
                                          {"argument", "x"},
                                          {"element_offset", 100},
                                          {"numel", 100},
                                          {"storage_elements", 100}}}}};
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Verified);
  auto it = std::find_if(e.flags.begin(), e.flags.end(),
                         [](const Flag& f) { return f.id == "out_of_bounds_access"; });
  ASSERT_NE(it, e.flags.end()) << json(e.flags).dump();
  EXPECT_EQ(it->severity, Severity::Warning);
  EXPECT_EQ(it->line, 7);
  EXPECT_NE(it->message.find("load outside x's storage in kernel add_kernel at element offset 100"),
            std::string::npos)
      << it->message;
  EXPECT_EQ(it->evidence["events"][0]["argument"], "x");
  o.candidateFacts["out_of_bounds"]["events"] = json::array();
  EXPECT_FALSE(hasFlag(judge(o, {}), "out_of_bounds_access"));
}

TEST(Judge, TimingCrossCheckToleratesPipeLatencyOnFastCalls) {
  auto o = honest();
  o.candidateFacts["timing"]["median_ms"] = 0.004;
  o.outsideCheckMs = 13.0;  // 2000 calls of 4 us and 5 ms of pipe latency and scheduling
  o.checkReps = 2000;
  auto e = judge(o, {});
  EXPECT_FALSE(hasFlag(e, "unconfirmed_timing")) << json(e.flags).dump();
}

TEST(Judge, TimingCrossCheckAllowsFivePercentNotAHundredMilliseconds) {
  auto o = honest();
  o.candidateFacts["timing"]["median_ms"] = 0.5;  // forged, or a loaded machine: 2.5 ms outside
  o.outsideCheckMs = 250.0;
  o.checkReps = 100;
  auto e = judge(o, {});
  ASSERT_TRUE(hasFlag(e, "unconfirmed_timing")) << json(e.flags).dump();
  EXPECT_EQ(e.verdict, Verdict::Verified);  // a warning: the forgery gains nothing
  const auto it = std::find_if(e.flags.begin(), e.flags.end(),
                               [](const Flag& f) { return f.id == "unconfirmed_timing"; });
  EXPECT_DOUBLE_EQ(it->evidence["allowance_ms"].get<double>(), 12.5);
  // The outside time replaces the reported one, and the speedup follows it.
  ASSERT_TRUE(e.timing.candidateMs);
  EXPECT_DOUBLE_EQ(*e.timing.candidateMs, 2.5);
  ASSERT_TRUE(e.speedup);
  EXPECT_DOUBLE_EQ(*e.speedup, *e.timing.referenceMs / 2.5);
  o.candidateFacts["timing"]["median_ms"] = 1.5;  // within a factor of two: believed
  EXPECT_FALSE(hasFlag(judge(o, {}), "unconfirmed_timing"));
}

TEST(Judge, PhysicalFloorIsProofOnTheGpuAndOnlyForLargeTasksOnTheCpu) {
  auto o = honest();
  o.referenceFacts["cost"]["bytes"] = 1e7;  // 10 MB at 10 GB/s: 1 ms; the candidate takes 0.1
  o.candidateFacts["timing"]["median_ms"] = 0.1;
  o.outsideCheckMs = 1.5;  // 10 calls, as reported
  auto e = judge(o, {});
  EXPECT_TRUE(hasFlag(e, "implausible_speedup"));  // cached data can be this fast on a CPU
  EXPECT_FALSE(hasFlag(e, "impossible_timing"));
  o.referenceFacts["device"]["kind"] = "cuda";  // the L2 is flushed before each timed call
  e = judge(o, {});
  EXPECT_TRUE(hasFlag(e, "impossible_timing"));
  EXPECT_EQ(e.verdict, Verdict::Cheating);
  o.referenceFacts["device"]["kind"] = "cpu";
  o.referenceFacts["cost"]["bytes"] = 1e9;  // 100 ms of memory traffic, far beyond the caches
  EXPECT_TRUE(hasFlag(judge(o, {}), "impossible_timing"));
}

TEST(Judge, StaticLowPrecisionCastWarnsOnlyForFp32References) {
  auto o = honest();
  o.staticFacts["observations"] = {
      {{"kind", "low_precision_cast"}, {"line", 9}, {"detail", ".to(tl.float16)"}}};
  auto e = judge(o, {});
  EXPECT_TRUE(hasFlag(e, "precision_downgrade"));
  EXPECT_EQ(e.verdict, Verdict::Verified);
  o.referenceFacts["outputs"] = {{{"dtype", "float16"}, {"shape", {4}}}};
  EXPECT_FALSE(hasFlag(judge(o, {}), "precision_downgrade"));
}

TEST(Judge, ImplausibleSpeedupByCeilingAndRoofline) {
  auto o = honest();
  o.referenceFacts["timing"]["eager_ms"] = 100.0;
  auto e = judge(o, {});
  EXPECT_TRUE(hasFlag(e, "implausible_speedup"));
  EXPECT_EQ(e.verdict, Verdict::Verified);  // a warning

  o = honest();
  o.referenceFacts["cost"]["bytes"] = 5e7;  // 50 MB at 10 GB/s is at least 5 ms
  e = judge(o, {});
  EXPECT_TRUE(hasFlag(e, "implausible_speedup"));
  EXPECT_EQ(e.verdict, Verdict::Verified);  // on a CPU, below the size that proves forgery
}

TEST(Judge, AWrongTimedOutputIsIncorrectNotCheating) {
  // The timed calls run on fresh inputs: a wrong output there may be an honest numerical miss.
  auto o = honest();
  o.timed[0] = comparison(false);
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Incorrect);
  EXPECT_FALSE(e.hasCheatFlag());
  EXPECT_FALSE(e.speedup);
  EXPECT_FALSE(e.correctness["timed"][0]["ok"].get<bool>());
}

TEST(Judge, WrongOutputIsIncorrectWithoutSpeedup) {
  auto o = honest();
  o.trials[2] = comparison(false);
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Incorrect);
  EXPECT_FALSE(e.speedup);
  EXPECT_EQ(*e.reward.total, 0.0);
}

TEST(Judge, ProcessFailuresAreErrorsBlamedOnTheCandidate) {
  auto o = honest();
  o.candidateFacts = nullptr;
  o.candidateProcess.reportedFacts = false;
  o.candidateProcess.timedOut = true;
  o.candidateProcess.timeoutSeconds = 5;
  o.trials = {std::nullopt, std::nullopt};
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Error);
  ASSERT_TRUE(e.error);
  EXPECT_EQ(e.error->stage, "timeout");
  EXPECT_EQ(e.error->blame, "candidate");

  o.candidateProcess.timedOut = false;
  o.candidateProcess.termSignal = 11;
  EXPECT_EQ(judge(o, {}).error->stage, "crash");
  o.candidateProcess.termSignal = 0;
  o.candidateProcess.memoryExceeded = true;
  EXPECT_EQ(judge(o, {}).error->stage, "memory");
  o.candidateProcess.memoryExceeded = false;
  o.candidateProcess.exitCode = 0;  // exited (e.g. os._exit at import) without facts
  EXPECT_EQ(judge(o, {}).error->stage, "crash");
}

TEST(Judge, ACheatFlagOutranksAHang) {
  auto o = honest();
  o.staticFacts["observations"] = {{{"kind", "introspection"}, {"line", 5}, {"detail", "gc"}}};
  o.candidateFacts = nullptr;
  o.candidateProcess.reportedFacts = false;
  o.candidateProcess.timedOut = true;
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Cheating);
  ASSERT_TRUE(e.error);
  EXPECT_EQ(e.error->stage, "timeout");
}

TEST(Judge, ExceptionsInCandidateCodeAreIncorrectWithTheLine) {
  auto o = honest();
  o.candidateFacts["trials"][0] = {
      {"index", 0}, {"ok", false}, {"error", {{"message", "ValueError: bad"}, {"line", 33}}}};
  o.trials[0] = std::nullopt;
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Incorrect);
  ASSERT_TRUE(e.error);
  EXPECT_EQ(e.error->stage, "run");
  EXPECT_EQ(e.error->line, 33);

  o = honest();
  o.candidateFacts["load"] = {{"ok", false}, {"error", {{"message", "SyntaxError"}, {"line", 3}}}};
  e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Incorrect);
  EXPECT_EQ(e.error->stage, "load");
}

TEST(Judge, MalformedFactsAreAnInfrastructureErrorNotACrash) {
  auto o = honest();
  o.candidateFacts["launches"] = "garbage";
  o.candidateFacts["trials"] = 17;
  o.candidateFacts["outputs"] = {{{"problem", 42}}};
  auto e = judge(o, {});  // must not throw
  EXPECT_NE(e.verdict, Verdict::Verified);
}

TEST(Judge, InfrastructureErrorsHaveNoReward) {
  auto o = honest();
  o.candidateProcess.cancelled = true;
  auto e = judge(o, {});
  EXPECT_EQ(e.verdict, Verdict::Error);
  EXPECT_FALSE(e.reward.total);
}

TEST(Judge, OtherPresetsAreApplied) {
  JudgeOptions options;
  options.rewardPreset = "kevin";
  auto e = judge(honest(), options);
  EXPECT_EQ(e.reward.preset, "kevin");
  ASSERT_TRUE(e.reward.total);
  EXPECT_NEAR(*e.reward.total, 0.3 + 2.0, 1e-9);
}

}  // namespace
}  // namespace crucible
