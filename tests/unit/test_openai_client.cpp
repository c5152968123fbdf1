// The endpoint client against a real local HTTP server (tests/support/fake_openai_server.py):
// what it sends, how it reads streams, n samples, errors and cancellation. And the SSE reader.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <thread>

#include "core/generate/endpoint_generator.h"
#include "core/generate/http_client.h"
#include "core/generate/openai_client.h"
#include "core/generate/prompt_library.h"
#include "core/generate/sse.h"
#include "tests/support/fake_endpoint.h"

namespace crucible::generate {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

TEST(SseReader, EventsSplitAnywhereComeOutWhole) {
  const std::string stream =
      ": keep-alive\r\n\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata: line one\ndata: line two\n\n"
      "data: [DONE]";
  for (std::size_t split = 0; split <= stream.size(); ++split) {
    std::vector<std::string> events;
    SseReader reader([&](const std::string& d) { events.push_back(d); });
    reader.feed(stream.substr(0, split));
    reader.feed(stream.substr(split));
    reader.finish();
    ASSERT_EQ(events, (std::vector<std::string>{"{\"a\":1}", "line one\nline two", "[DONE]"}))
        << "split at " << split;
  }
}

TEST(OpenAIClient, RequestBodyCarriesTheSamplingParameters) {
  ChatRequest r;
  r.messages = {{"user", "hi"}};
  r.n = 3;
  EXPECT_EQ(chatRequestBody("m", r),
            (json{{"model", "m"},
                  {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})},
                  {"n", 3},
                  {"stream", true}}));
  r.temperature = 0.7;
  r.topP = 0.95;
  r.maxTokens = 2048;
  r.stop = {"</answer>"};
  r.seed = 11;
  const json body = chatRequestBody("m", r);
  EXPECT_EQ(body["temperature"], 0.7);
  EXPECT_EQ(body["top_p"], 0.95);
  EXPECT_EQ(body["max_tokens"], 2048);
  EXPECT_EQ(body["stop"], json::array({"</answer>"}));
  EXPECT_EQ(body["seed"], 11);
  EXPECT_EQ(chatCompletionsUrl("http://h:1/v1/"), "http://h:1/v1/chat/completions");
  EXPECT_EQ(chatCompletionsUrl("http://h:1/v1/chat/completions"), "http://h:1/v1/chat/completions");
}

class EndpointTest : public ::testing::Test {
 protected:
  std::unique_ptr<testing::FakeEndpoint> start(const json& script) {
    return std::make_unique<testing::FakeEndpoint>(
        CRUCIBLE_TEST_PYTHON,
        std::string(CRUCIBLE_TEST_DATA_DIR) + "/support/fake_openai_server.py", script, dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_ =
      fs::temp_directory_path() / ("crucible-endpoint-" + std::to_string(getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
};

const std::string kAnswer0 =
    "Plan: one kernel.\n```python\nclass ModelNew: zero  # seed {{seed}}\n```\n";
const std::string kAnswer1 = "<think>tile it</think>\n```python\nclass ModelNew: one\n```";

TEST_F(EndpointTest, StreamsNChoicesAndSendsWhatWasAsked) {
  auto server = start({{"responses", {{{"choices", {kAnswer0, kAnswer1}}, {"chunk", 5}}}}});
  OpenAIClient client({server->url(), "served-model", "sk-test"});
  ChatRequest r;
  r.messages = {{"system", "s"}, {"user", "u"}};
  r.n = 2;
  r.temperature = 0.6;
  r.topP = 0.9;
  r.maxTokens = 512;
  r.stop = {"STOP"};
  r.seed = 7;
  std::map<int, std::string> streamed;
  std::vector<int> finishedOrder;
  const auto choices = client.complete(
      r, {}, [&](int i, const std::string& text) { streamed[i] += text; },
      [&](const ChatChoice& c) { finishedOrder.push_back(c.index); });
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(choices[0].text, "Plan: one kernel.\n```python\nclass ModelNew: zero  # seed 7\n```\n");
  EXPECT_EQ(choices[1].text, kAnswer1);
  EXPECT_EQ(choices[0].finishReason, "stop");
  EXPECT_EQ(streamed[0], choices[0].text);
  EXPECT_EQ(finishedOrder.size(), 2u);

  const auto sent = server->requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(sent[0]["authorization"], "Bearer sk-test");
  const json& body = sent[0]["body"];
  EXPECT_EQ(body["model"], "served-model");
  EXPECT_EQ(body["n"], 2);
  EXPECT_EQ(body["temperature"], 0.6);
  EXPECT_EQ(body["top_p"], 0.9);
  EXPECT_EQ(body["max_tokens"], 512);
  EXPECT_EQ(body["stop"], json::array({"STOP"}));
  EXPECT_EQ(body["seed"], 7);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["messages"][1], (json{{"role", "user"}, {"content", "u"}}));
}

TEST_F(EndpointTest, ModelNameComesFromTheServerAndReasoningBecomesAThinkBlock) {
  auto server =
      start({{"model", "listed-model"},
             {"responses",
              {{{"choices", {"```python\nclass ModelNew: x\n```"}}, {"reasoning", {"fuse it"}}}}}});
  OpenAIClient client({server->url(), "", ""});
  EXPECT_EQ(client.model(), "listed-model");
  const auto choices = client.complete({{{"user", "u"}}}, {}, {}, {});
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0].text, "<think>\nfuse it\n</think>\n```python\nclass ModelNew: x\n```");
  const auto sent = server->requests();
  EXPECT_EQ(sent.at(0)["path"], "/v1/models");
  EXPECT_TRUE(sent.at(1)["authorization"].is_null());  // no key, no header
  EXPECT_EQ(sent.at(1)["body"]["model"], "listed-model");
}

TEST_F(EndpointTest, APlainJsonAnswerIsAcceptedToo) {
  auto server = start({{"responses", {{{"choices", {"a", "b"}}, {"stream", false}}}}});
  OpenAIClient client({server->url(), "m", ""});
  ChatRequest r;
  r.messages = {{"user", "u"}};
  r.n = 2;
  const auto choices = client.complete(r, {}, {}, {});
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(choices[1].text, "b");
}

std::string failureOf(OpenAIClient& client) {
  try {
    client.complete({{{"user", "u"}}}, {}, {}, {});
  } catch (const GenerateError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(EndpointTest, ErrorsSayWhatWentWrong) {
  auto server = start({{"responses",
                        {{{"status", 401}, {"error", "invalid api key"}},
                         {{"choices", {"x"}}, {"bad_json", true}}}}});
  OpenAIClient client({server->url(), "m", ""});
  const std::string unauthorised = failureOf(client);
  EXPECT_NE(unauthorised.find("answered HTTP 401: invalid api key"), std::string::npos)
      << unauthorised;
  EXPECT_NE(unauthorised.find("CRUCIBLE_API_KEY"), std::string::npos);
  const std::string badJson = failureOf(client);
  EXPECT_NE(badJson.find("not JSON: {this is not json"), std::string::npos) << badJson;

  // A port nobody listens on: bind one, learn its number, close it.
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof a;
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &length);
  close(s);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/v1";
  OpenAIClient nobody({url, "m", ""});
  const std::string refused = failureOf(nobody);
  EXPECT_NE(refused.find("cannot connect to " + url + "/chat/completions"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("is the server running"), std::string::npos);
}

TEST_F(EndpointTest, AStopRequestEndsAStalledStream) {
  auto server = start(
      {{"responses", {{{"choices", {"aaaaaaaaaaaaaaaaaaaa"}}, {"chunk", 2}, {"stall_after", 3}}}}});
  OpenAIClient client({server->url(), "m", ""});
  std::stop_source stop;
  std::atomic<int> deltas = 0;
  std::vector<ChatChoice> choices;
  std::thread worker([&] {
    choices = client.complete({{{"user", "u"}}}, stop.get_token(),
                              [&](int, const std::string&) {
                                if (++deltas == 3)
                                  stop.request_stop();  // the server now sends nothing more
                              },
                              {});
  });
  worker.join();  // returns only because the stop request ended the transfer
  EXPECT_EQ(deltas.load(), 3);
  ASSERT_EQ(choices.size(), 1u);  // what arrived is kept, unfinished
  EXPECT_EQ(choices[0].text, "aaaaaa");
  EXPECT_EQ(choices[0].finishReason, "");
}

TEST_F(EndpointTest, GeneratorAsksAgainWhenTheServerIgnoresN) {
  auto server = start(
      {{"responses",
        {{{"choices", {"```python\nclass ModelNew: seed {{seed}}\n```"}}, {"ignore_n", true}}}}});
  EndpointGenerator generator({server->url(), "fake", ""}, builtinPromptTemplate("kernelbench"));
  GenerateRequest request;
  request.referenceSource = "class Model: pass\n";
  request.referenceName = "tiny";
  request.n = 3;
  request.seed = 100;
  std::vector<GeneratedCandidate> got;
  generator.generate(request, {}, {}, [&](GeneratedCandidate c) { got.push_back(std::move(c)); });
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].index, i);
    EXPECT_EQ(got[i].origin, "endpoint");
    EXPECT_EQ(got[i].model, "fake");
    EXPECT_EQ(got[i].code, "class ModelNew: seed " + std::to_string(100 + i) + "\n");
    EXPECT_NE(got[i].prompt.find("<|user|>\n"), std::string::npos);
    EXPECT_NE(got[i].prompt.find("class Model: pass"), std::string::npos);
  }
  const auto bodies = server->chatRequests();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0]["n"], 3);
  EXPECT_EQ(bodies[1]["n"], 2);
  EXPECT_EQ(bodies[2]["n"], 1);
}

TEST_F(EndpointTest, AnAnswerWithoutCodeStillArrivesWithItsReason) {
  auto server = start(
      {{"responses", {{{"choices", {"I cannot help with that."}}, {"finish_reason", "length"}}}}});
  EndpointGenerator generator({server->url(), "fake", ""}, std::nullopt);
  GenerateRequest request;
  std::vector<GeneratedCandidate> got;
  generator.generate(request, {}, {}, [&](GeneratedCandidate c) { got.push_back(std::move(c)); });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].code, "");
  EXPECT_EQ(got[0].rawResponse, "I cannot help with that.");
  EXPECT_EQ(got[0].error,
            "the answer has no code block that defines class ModelNew (it was cut off at the "
            "token limit)");
}

}  // namespace
}  // namespace crucible::generate
