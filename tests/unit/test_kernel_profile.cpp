// The profile's value type: the roof arithmetic, the spread of samples, pairing the profile
// stage's timed and counted facts, and the JSON round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/inspect/kernel_profile.h"

namespace crucible {
namespace {

using nlohmann::json;

DevicePeaks peaks() {
  DevicePeaks d;
  d.name = "test device";
  d.backend = "opencl";
  d.bandwidthGBs = 100;  // the ridge is at 10 FLOP per byte
  d.peakGflops = 1000;
  d.method = "by hand";
  return d;
}

TEST(KernelProfileRoof, AVectorAddIsBoundByMemory) {
  // 3 * 1e6 * 4 bytes and 1e6 FLOPs in 1 ms: 12 GB/s, 1 GFLOP/s, 1/12 FLOP per byte.
  const auto r = roofPoint(12e6, 1e6, 1.0, peaks());
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->memoryBound);
  EXPECT_DOUBLE_EQ(r->intensity, 1.0 / 12);
  EXPECT_NEAR(r->attainableGflops, 100.0 / 12, 1e-9);  // intensity * bandwidth
  EXPECT_NEAR(r->fraction, 0.12, 1e-12);               // 12 of 100 GB/s
}

TEST(KernelProfileRoof, AMatmulPastTheRidgeIsBoundByCompute) {
  // 1e6 bytes and 1e8 FLOPs (100 per byte) in 0.5 ms: 200 GFLOP/s against a 1000 roof.
  const auto r = roofPoint(1e6, 1e8, 0.5, peaks());
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->memoryBound);
  EXPECT_DOUBLE_EQ(r->attainableGflops, 1000);
  EXPECT_NEAR(r->fraction, 0.2, 1e-12);
}

TEST(KernelProfileRoof, ACopyWithoutArithmeticStillHasAFraction) {
  const auto r = roofPoint(50e6, 0, 1.0, peaks());  // 50 GB/s
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->memoryBound);
  EXPECT_DOUBLE_EQ(r->attainableGflops, 0);
  EXPECT_NEAR(r->fraction, 0.5, 1e-12);
}

TEST(KernelProfileRoof, NothingToPlaceWithoutTimeOrPeaks) {
  EXPECT_FALSE(roofPoint(1e6, 1e6, 0, peaks()));
  EXPECT_FALSE(roofPoint(0, 0, 1, peaks()));
  DevicePeaks none = peaks();
  none.bandwidthGBs = 0;
  EXPECT_FALSE(roofPoint(1e6, 1e6, 1, none));
}

TEST(KernelProfileSpread, MedianAndQuartilesInterpolate) {
  const auto t = spreadOf({4, 1, 3, 2});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->samples, 4);
  EXPECT_DOUBLE_EQ(t->minMs, 1);
  EXPECT_DOUBLE_EQ(t->maxMs, 4);
  EXPECT_DOUBLE_EQ(t->medianMs, 2.5);
  EXPECT_DOUBLE_EQ(t->q1Ms, 1.75);
  EXPECT_DOUBLE_EQ(t->q3Ms, 3.25);
  EXPECT_FALSE(spreadOf({}));
}

json timedFacts() {
  return {{"mode", "time"},
          {"timer", "host clock"},
          {"calls", 3},
          {"warmup", 1},
          {"calls_matching", 3},
          {"forward_ms", {2.0, 2.0, 3.0}},
          {"error", nullptr},
          {"launches",
           {{{"kernel", "add_kernel"},
             {"launch_line", 20},
             {"def_line", 7},
             {"grid", {8, 1, 1}},
             {"ms", {1.0, 1.0, 1.5}}},
            {{"kernel", "matmul_kernel"},
             {"launch_line", 23},
             {"def_line", nullptr},
             {"grid", {2, 2, 1}},
             {"ms", {0.5, 0.5, 0.5}}}}}};
}

json countedFacts() {
  return {{"mode", "count"},
          {"error", nullptr},
          {"launches",
           {{{"kernel", "add_kernel"},
             {"counted", true},
             {"bytes_read", 8000000},
             {"bytes_written", 4000000},
             {"flops", 1000000}},
            {{"kernel", "matmul_kernel"},
             {"counted", false},
             {"reason", "counting stopped after 60 s, 3 programs in"},
             {"bytes_read", nullptr},
             {"bytes_written", nullptr},
             {"flops", nullptr}}}}};
}

TEST(KernelProfileFacts, PairsTimedAndCountedLaunches) {
  const KernelProfile p = profileFromFacts(timedFacts(), countedFacts(), peaks());
  ASSERT_FALSE(p.error);
  ASSERT_EQ(p.launches.size(), 2u);
  const LaunchProfile& add = p.launches[0];
  EXPECT_EQ(add.kernel, "add_kernel");
  EXPECT_EQ(add.launchLine, 20);
  EXPECT_EQ(add.defLine, 7);
  EXPECT_EQ(add.grid, (std::vector<std::int64_t>{8, 1, 1}));
  ASSERT_TRUE(add.time);
  EXPECT_DOUBLE_EQ(add.time->medianMs, 1.0);
  EXPECT_EQ(add.bytes(), 12000000);
  EXPECT_NEAR(*add.achievedGBs, 12, 1e-9);
  EXPECT_NEAR(*add.achievedGflops, 1, 1e-9);
  ASSERT_TRUE(add.roof);
  EXPECT_NEAR(add.roof->fraction, 0.12, 1e-12);
  EXPECT_NEAR(*add.share, 0.5, 1e-12);  // 1 ms of a 2 ms forward
  const LaunchProfile& dot = p.launches[1];
  EXPECT_FALSE(dot.counted);
  EXPECT_NE(dot.notCountedReason.find("counting stopped"), std::string::npos);
  EXPECT_FALSE(dot.roof);
  EXPECT_FALSE(dot.achievedGBs);
  EXPECT_NEAR(*p.launchesShare, 0.75, 1e-12);
  EXPECT_TRUE(p.countNote.empty());
}

TEST(KernelProfileFacts, OtherKernelsInTheCountLeaveItOut) {
  json counted = countedFacts();
  counted["launches"].erase(1);
  const KernelProfile p = profileFromFacts(timedFacts(), counted, peaks());
  EXPECT_NE(p.countNote.find("other kernels"), std::string::npos);
  for (const auto& l : p.launches) EXPECT_FALSE(l.counted);
}

TEST(KernelProfileFacts, TheCandidatesErrorKeepsItsLine) {
  json timed = timedFacts();
  timed["launches"] = json::array();
  timed["error"] = {{"stage", "run"}, {"message", "ValueError: no"}, {"line", 12}};
  const KernelProfile p = profileFromFacts(timed, nullptr, peaks());
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->stage, "run");
  EXPECT_EQ(p.error->line, 12);
  EXPECT_TRUE(p.launches.empty());
}

TEST(KernelProfileJson, RoundTrips) {
  KernelProfile p = profileFromFacts(timedFacts(), countedFacts(), peaks());
  p.candidate = "candidate.py";
  p.reference = "reference.py";
  const json j = p;
  EXPECT_EQ(j["launches"][0]["roof"]["bound"], "memory");
  EXPECT_EQ(j["launches"][0]["bytes"], 12000000);
  EXPECT_EQ(j["device"]["bandwidth_gbs"], 100);
  EXPECT_TRUE(j["launches"][1]["roof"].is_null());
  const KernelProfile back = j.get<KernelProfile>();
  EXPECT_EQ(json(back), j);
  EXPECT_EQ(back.launches[1].notCountedReason, p.launches[1].notCountedReason);
  EXPECT_EQ(back.launches[0].defLine, 7);
  EXPECT_FALSE(back.launches[1].defLine);

  ProfileError e{"run", "boom", "candidate.py", 4};
  KernelProfile failed;
  failed.error = e;
  const KernelProfile failedBack = json(failed).get<KernelProfile>();
  ASSERT_TRUE(failedBack.error);
  EXPECT_EQ(failedBack.error->file, "candidate.py");
  EXPECT_EQ(failedBack.error->line, 4);
}

TEST(KernelProfileJson, NoInfiniteIntensityInJson) {
  RoofPoint r;
  r.intensity = std::numeric_limits<double>::infinity();
  r.attainableGflops = 1000;
  const json j = r;
  EXPECT_TRUE(j["intensity"].is_null());
  EXPECT_TRUE(std::isinf(j.get<RoofPoint>().intensity));
}

}  // namespace
}  // namespace crucible
