// The evaluation service's value types: requests as KernelGYM's clients send them, lanes, and
// the job table's persistence.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/serve/eval_request.h"
#include "core/serve/job_table.h"
#include "core/serve/lanes.h"

namespace crucible::serve {
namespace {

using nlohmann::json;

json minimal() {
  return json{{"reference_code", "class Model: ..."}, {"kernel_code", "code"}};
}

int statusOf(const json& body) {
  try {
    parseEvalRequest(body, RequestLimits{});
  } catch (const RequestError& e) {
    return e.status();
  }
  return 0;
}

TEST(ServeRequest, KernelGymFieldsAreReadAndItsExtrasIgnored) {
  json body = minimal();
  body["task_id"] = "job-7";
  body["num_correct_trials"] = 3;
  body["toolkit"] = "kernelbench";
  body["backend_adapter"] = "triton";
  const EvalRequest r = parseEvalRequest(body, RequestLimits{});
  EXPECT_EQ(r.taskId, "job-7");
  EXPECT_EQ(r.trials, 3);
  EXPECT_EQ(r.rewardPreset, "tritonrl");
  EXPECT_EQ(json(r).get<EvalRequest>(), r);  // round trip
}

TEST(ServeRequest, BadFieldsAreRefusedWithTheirStatus) {
  EXPECT_EQ(statusOf(json::array()), 400);
  EXPECT_EQ(statusOf(json{{"kernel_code", "x"}}), 400);
  json unknown = minimal();
  unknown["colour"] = 1;
  EXPECT_EQ(statusOf(unknown), 400);
  json big = minimal();
  big["kernel_code"] = std::string(300 * 1024, 'x');
  EXPECT_EQ(statusOf(big), 413);
  json timeout = minimal();
  timeout["timeout"] = -1;
  EXPECT_EQ(statusOf(timeout), 400);
  json preset = minimal();
  preset["reward_preset"] = "mine";
  EXPECT_EQ(statusOf(preset), 400);
}

TEST(ServeRequest, TheDigestIgnoresTheIdAndFollowsEverythingElse) {
  EvalRequest a = parseEvalRequest(minimal(), RequestLimits{});
  EvalRequest b = a;
  b.taskId = "other";
  EXPECT_EQ(a.digest(), b.digest());
  b.trials = 9;
  EXPECT_NE(a.digest(), b.digest());
}

TEST(ServeLanes, ListsOfGpusAndTheCpuParseAndBadOnesAreNamed) {
  const auto lanes = parseLanes("cuda:0,cuda:1,cpu", "opencl");
  ASSERT_EQ(lanes.size(), 3U);
  EXPECT_EQ(lanes[1], (LaneSpec{"cuda:1", "cuda", 1}));
  EXPECT_EQ(lanes[2], (LaneSpec{"cpu", "opencl", std::nullopt}));
  EXPECT_TRUE(laneServes(lanes[2], "interpret"));
  EXPECT_FALSE(laneServes(lanes[0], "opencl"));
  EXPECT_TRUE(laneServes(lanes[0], ""));
  EXPECT_EQ(parseLanes("cpu,cpu:1", "interpret")[1],
            (LaneSpec{"cpu:1", "interpret", std::nullopt}));
  for (const char* bad : {"gpu0", "cuda:", "cuda:x", "cpu,cpu", "cpu:", "cpu:a", ""}) {
    EXPECT_THROW(parseLanes(bad, "opencl"), RequestError) << bad;
  }
}

TEST(ServeJobTable, JobsSurviveReopeningWithTheirState) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("crucible-jobs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string db = (dir / "jobs.db").string();
  const EvalRequest request = parseEvalRequest(minimal(), RequestLimits{});
  {
    JobTable table(db);
    EXPECT_TRUE(table.insertOrGet("a", request).second);
    EXPECT_FALSE(table.insertOrGet("a", request).second);
    table.insertOrGet("b", request);
    table.markRunning("a", "cpu", 1);
    table.finish("b", json{{"evaluation", {{"verdict", "verified"}}}}, std::nullopt);
  }
  JobTable reopened(db);
  const auto left = reopened.unfinished();
  ASSERT_EQ(left.size(), 1U);
  EXPECT_EQ(left[0].id, "a");
  EXPECT_EQ(left[0].state, JobState::Running);
  EXPECT_EQ(left[0].attempts, 1);
  EXPECT_EQ(left[0].request, request);
  const auto b = reopened.find("b");
  ASSERT_TRUE(b && b->result);
  EXPECT_EQ((*b->result)["evaluation"]["verdict"], "verified");
  EXPECT_EQ(reopened.counts()["done"], 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace crucible::serve
