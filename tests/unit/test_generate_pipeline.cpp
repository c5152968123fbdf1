// The pipeline's bookkeeping with answers that hold no code (judged without a worker): storing
// as they arrive, refine lineage, ids without a database, and a generator failure mid-run. The
// full path with verification is in tests/cli/test_generate_cli.cpp.

#include <gtest/gtest.h>

#include "core/generate/endpoint_generator.h"
#include "core/generate/pipeline.h"
#include "tests/support/fake_endpoint.h"

namespace crucible::generate {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class PipelineTest : public ::testing::Test {
 protected:
  std::unique_ptr<testing::FakeEndpoint> start(const json& responses) {
    return std::make_unique<testing::FakeEndpoint>(
        CRUCIBLE_TEST_PYTHON,
        std::string(CRUCIBLE_TEST_DATA_DIR) + "/support/fake_openai_server.py",
        json{{"responses", responses}}, dir_);
  }
  GenerationRequest request(SearchMode mode, int n, int rounds) {
    GenerationRequest r;
    r.generate.referenceSource = "class Model: pass\n";
    r.generate.referenceName = "tiny";
    r.verify.referencePath = "tiny.py";
    r.verify.backend = "interpret";
    r.mode = mode;
    r.n = n;
    r.rounds = rounds;
    r.task = store::TaskInput{"tiny", "tiny.py", "class Model: pass\n"};
    return r;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_ =
      fs::temp_directory_path() / ("crucible-pipeline-" + std::to_string(getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
};

TEST_F(PipelineTest, AnswersWithoutCodeAreJudgedInvalidAndStoredWithTheirLineage) {
  auto server = start(json::array(
      {{{"choices", {"no code, sorry", "still none"}}}, {{"choices", {"nothing again", "nope"}}}}));
  EndpointGenerator generator({server->url(), "fake", ""}, std::nullopt);
  GenerationRequest r = request(SearchMode::Refine, 2, 2);
  r.databasePath = (dir_ / "g.db").string();
  std::vector<GenerationEvent::Kind> events;
  const GenerationResult result =
      runGeneration(generator, r, {}, [&](const GenerationEvent& e) { events.push_back(e.kind); });

  ASSERT_EQ(result.candidates.size(), 4u);
  EXPECT_FALSE(result.best.has_value());
  EXPECT_FALSE(result.interrupted);
  EXPECT_EQ(result.generatorError, "");
  for (const auto& c : result.candidates) {
    ASSERT_TRUE(c.evaluation.has_value());
    EXPECT_EQ(c.evaluation->verdict, Verdict::Invalid);
    EXPECT_EQ(c.evaluation->error->stage, "extract");
    EXPECT_EQ(c.evaluation->reward.preset, "tritonrl");
    ASSERT_TRUE(c.evaluation->reward.total.has_value());
    EXPECT_EQ(*c.evaluation->reward.total, 0);
  }
  // Round two refines the latest of the equally wrong first-round answers.
  EXPECT_EQ(result.candidates[2].round, 2);
  EXPECT_EQ(result.candidates[2].parentId, result.candidates[1].id);
  EXPECT_EQ(result.candidates[3].parentId, result.candidates[1].id);
  const auto bodies = server->chatRequests();
  ASSERT_EQ(bodies.size(), 2u);
  const std::string second = bodies[1]["messages"].back()["content"];
  EXPECT_NE(second.find("Verdict: invalid"), std::string::npos) << second;
  EXPECT_NE(second.find("Error (extract): the answer has no code block"), std::string::npos);

  store::Store db(*r.databasePath);
  const auto session = db.session(*result.sessionId);
  ASSERT_TRUE(session.has_value());
  EXPECT_EQ(session->kind, "generate");
  EXPECT_EQ(session->note, "search refine, n=2, rounds=2");
  ASSERT_EQ(session->candidates.size(), 4u);
  EXPECT_EQ(session->candidates[0].rawResponse, "no code, sorry");
  EXPECT_EQ(session->candidates[3].parentId, result.candidates[1].id);
  EXPECT_EQ(session->candidates[3].evaluations.at(0).evaluation, *result.candidates[3].evaluation);
  EXPECT_EQ(std::count(events.begin(), events.end(), GenerationEvent::Kind::Round), 2);
  EXPECT_EQ(std::count(events.begin(), events.end(), GenerationEvent::Kind::Verified), 4);

  const json j = result;
  EXPECT_EQ(j["best"], nullptr);
  EXPECT_EQ(j["candidates"][3]["parent"], result.candidates[1].id);
  EXPECT_EQ(j["candidates"][0]["verdict"], "invalid");
  EXPECT_EQ(j["candidates"][0]["error"],
            "the answer has no code block that defines class ModelNew");
}

TEST_F(PipelineTest, AGeneratorFailureEndsTheRunAndKeepsWhatCameBefore) {
  auto server = start(
      json::array({{{"choices", {"no code"}}}, {{"status", 500}, {"error", "the GPU fell over"}}}));
  EndpointGenerator generator({server->url(), "fake", ""}, std::nullopt);
  const GenerationResult result = runGeneration(generator, request(SearchMode::Refine, 1, 3), {});
  ASSERT_EQ(result.candidates.size(), 1u);
  EXPECT_EQ(result.candidates[0].id, 1);  // no database: ids count from 1
  EXPECT_FALSE(result.sessionId.has_value());
  EXPECT_NE(result.generatorError.find("answered HTTP 500: the GPU fell over"), std::string::npos)
      << result.generatorError;
  EXPECT_EQ(server->chatRequests().size(), 2u);  // no third round after the failure
}

TEST_F(PipelineTest, BadSettingsAreRefusedBeforeAnythingIsAsked) {
  auto server = start(json::array({{{"choices", {"x"}}}}));
  EndpointGenerator generator({server->url(), "fake", ""}, std::nullopt);
  GenerationRequest r = request(SearchMode::BestOfN, 1, 1);
  r.verify.rewardPreset = "nonsense";
  EXPECT_THROW(runGeneration(generator, r, {}), BadInput);
  r = request(SearchMode::BestOfN, 1, 1);
  r.verify.backend = "metal";
  EXPECT_THROW(runGeneration(generator, r, {}), BadInput);
  EXPECT_TRUE(server->chatRequests().empty());
}

}  // namespace
}  // namespace crucible::generate
