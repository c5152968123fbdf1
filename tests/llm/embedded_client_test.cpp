// The client of crucible-model (core/generate/model_process.h) against the real engine on tiny
// random-weight models made at test time (make_embedded_fixtures.py): streaming, cancel with the
// partial text kept, a child killed mid-generation (an error, not a hang), the engine kept loaded
// between generations and started again after a crash. Label model.

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/generate/embedded_generator.h"
#include "core/generate/model_process.h"
#include "tests/support/child_processes.h"

namespace crucible::generate {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

fs::path fixture(const std::string& name) {
  const char* dir = std::getenv("CRUCIBLE_EMBEDDED_FIXTURES");
  return fs::path(dir != nullptr ? dir : "") / name;
}

ModelLoadOptions tiny(const std::string& name = "qwen2") {
  return {fixture(name).string(), "cpu", "auto"};
}

EngineRequest ask(int n, int maxTokens) {
  EngineRequest r;
  r.messages = {{"system", "You write Triton kernels."}, {"user", "Write ModelNew for x + y."}};
  r.n = n;
  r.temperature = 0.8;
  r.seed = 7;
  r.maxTokens = maxTokens;
  return r;
}

class EmbeddedClient : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(fixture("qwen2") / "config.json")) {
      GTEST_FAIL() << "no tiny model in $CRUCIBLE_EMBEDDED_FIXTURES (run through ctest)";
    }
  }
};

TEST_F(EmbeddedClient, LoadsAndStreamsEveryCandidatesText) {
  ModelProcess engine;
  const auto loaded = engine.load(tiny(), {});
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->architecture, "Qwen2ForCausalLM");
  EXPECT_EQ(loaded->chatFormat, "chatml");
  EXPECT_GT(loaded->parameters, 0);

  std::map<int, std::string> streamed;
  const auto answers =
      engine.generate(ask(3, 40), {}, [&](int i, const std::string& text) { streamed[i] += text; });
  ASSERT_EQ(answers.size(), 3u);
  for (const EngineCandidate& a : answers) {
    EXPECT_EQ(a.text, streamed[a.index]) << "candidate " << a.index;
    EXPECT_TRUE(a.finishReason == "stop" || a.finishReason == "length") << a.finishReason;
    EXPECT_GT(a.tokens, 0);
    EXPECT_LE(a.tokens, 40);
  }
  EXPECT_NE(answers[0].text, answers[1].text);  // seeds 7 and 8 draw differently
  // The same seed again gives the same text: the engine is deterministic per seed.
  const auto again = engine.generate(ask(1, 40), {}, {});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].text, answers[0].text);
}

TEST_F(EmbeddedClient, CancelReturnsThePartialText) {
  ModelProcess engine;
  ASSERT_TRUE(engine.load(tiny("qwen2-endless"), {}));
  std::stop_source stop;
  std::map<int, std::string> streamed;
  int pieces = 0;
  const auto start = Clock::now();
  const auto answers =
      engine.generate(ask(2, 4000), stop.get_token(), [&](int i, const std::string& text) {
        streamed[i] += text;
        if (++pieces == 20) stop.request_stop();  // mid-generation, from the streaming thread
      });
  ASSERT_EQ(answers.size(), 2u);
  for (const EngineCandidate& a : answers) {
    EXPECT_EQ(a.finishReason, "cancelled");
    EXPECT_LT(a.tokens, 4000);
    EXPECT_FALSE(a.text.empty());
    EXPECT_EQ(a.text.substr(0, streamed[a.index].size()), streamed[a.index]);
  }
  EXPECT_LT(Clock::now() - start, 60s);
  EXPECT_TRUE(engine.running());  // a cancel is not a kill: the model stays loaded
  const auto next = engine.generate(ask(1, 8), {}, {});
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].finishReason, "length");
}

TEST_F(EmbeddedClient, ChildKilledMidGenerationIsAnErrorNotAHang) {
  ModelProcess engine;
  ASSERT_TRUE(engine.load(tiny("qwen2-endless"), {}));
  int pieces = 0;
  std::vector<pid_t> killed;
  const auto start = Clock::now();
  try {
    engine.generate(ask(1, 4000), {}, [&](int, const std::string&) {
      if (++pieces != 10) return;
      killed = testing::childrenNamed("crucible-model");
      for (pid_t pid : killed) ::kill(pid, SIGKILL);  // as the out-of-memory killer would
    });
    FAIL() << "generate returned after its engine was killed";
  } catch (const GenerateError& e) {
    EXPECT_NE(std::string(e.what()).find("killed (SIGKILL)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("crucible-model"), std::string::npos) << e.what();
  }
  EXPECT_EQ(killed.size(), 1u);
  EXPECT_LT(Clock::now() - start, 60s);
  EXPECT_FALSE(engine.running());
  EXPECT_THROW(engine.generate(ask(1, 8), {}, {}), GenerateError);  // no hang afterwards either
}

TEST_F(EmbeddedClient, BadModelFolderIsTheEnginesMessageNamingTheFile) {
  ModelProcess engine;
  const fs::path empty = fs::temp_directory_path() / "crucible-embedded-empty-model";
  fs::create_directories(empty);
  try {
    engine.load({empty.string(), "cpu", "auto"}, {});
    FAIL() << "an empty folder loaded";
  } catch (const GenerateError& e) {
    EXPECT_NE(std::string(e.what()).find((empty / "config.json").string()), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(engine.running());  // errors are events: the engine is still there
  EXPECT_TRUE(engine.load(tiny(), {}));
}

TEST_F(EmbeddedClient, EngineStaysLoadedAndStartsAgainAfterACrash) {
  EmbeddedEngine engine;
  std::vector<std::string> lines;
  const auto note = [&](const std::string& line) { lines.push_back(line); };
  ModelProcess* first = engine.ready(tiny(), {}, note);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(engine.loaded());
  EXPECT_EQ(engine.loaded()->options.path, tiny().path);
  const std::size_t afterLoad = lines.size();
  EXPECT_EQ(engine.ready(tiny(), {}, note), first);  // no second load
  EXPECT_EQ(lines.size(), afterLoad);

  const auto pids = testing::childrenNamed("crucible-model");
  ASSERT_EQ(pids.size(), 1u);
  ::kill(pids[0], SIGKILL);
  // The crash is noticed at the next use, which starts the engine again and reloads.
  const auto deadline = Clock::now() + 30s;
  while (first->running() && Clock::now() < deadline) std::this_thread::yield();
  ASSERT_FALSE(first->running());
  ModelProcess* second = engine.ready(tiny(), {}, note);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(second->running());
  EXPECT_GT(lines.size(), afterLoad);
  EXPECT_EQ(second->generate(ask(1, 4), {}, {}).size(), 1u);
}

TEST_F(EmbeddedClient, GeneratorParsesGarbageIntoCandidatesWithoutCode) {
  auto engine = std::make_shared<EmbeddedEngine>();
  EmbeddedGenerator generator(tiny(), engine, std::nullopt);
  GenerateRequest request;
  request.referenceName = "add";
  request.referenceSource = "class Model:\n    pass\n";
  request.n = 2;
  request.maxTokens = 16;
  request.seed = 3;
  std::vector<GeneratedCandidate> candidates;
  std::map<int, std::string> streamed;
  std::vector<std::string> progress;
  generator.generate(
      request, {},
      [&](int i, const std::string& text) {
        if (i < 0)
          progress.push_back(text);
        else
          streamed[i] += text;
      },
      [&](GeneratedCandidate c) { candidates.push_back(std::move(c)); });
  ASSERT_EQ(candidates.size(), 2u);
  for (const GeneratedCandidate& c : candidates) {
    EXPECT_EQ(c.origin, "embedded");
    EXPECT_EQ(c.model, tiny().path);
    EXPECT_NE(c.prompt.find("<|user|>"), std::string::npos);
    EXPECT_NE(c.prompt.find("class Model:"), std::string::npos);  // the reference is in it
    EXPECT_EQ(c.rawResponse, streamed[c.index]);
    EXPECT_TRUE(c.code.empty());
    EXPECT_NE(c.error.find("no code block"), std::string::npos) << c.error;
  }
  ASSERT_FALSE(progress.empty());
  EXPECT_NE(progress.front().find("loading " + tiny().path), std::string::npos);
}

}  // namespace
}  // namespace crucible::generate
