// `crucible generate --model PATH` end to end with the embedded engine on a tiny random-weight
// model (make_embedded_fixtures.py): its answers are garbage, so every candidate is stored with
// its origin and model and judged invalid ("no code"), and the run says none verified. Ctrl-C in
// the middle of a generation keeps what was stored; a missing model is named. Label model.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/cli_run.h"
#include "tests/support/interrupted_run.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSource = CRUCIBLE_TEST_SOURCE_DIR;
const std::string kReference = kSource + "/resources/examples/row_softmax/reference.py";

fs::path fixture(const std::string& name) {
  const char* dir = std::getenv("CRUCIBLE_EMBEDDED_FIXTURES");
  return fs::path(dir != nullptr ? dir : "") / name;
}

/// The CLI with the engine and its thread count as ctest set them.
testing::CliResult crucible(const std::vector<std::string>& args) {
  std::map<std::string, std::string> env;
  for (const char* name : {"CRUCIBLE_MODEL_BIN", "OMP_NUM_THREADS"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  return testing::runProgram(CRUCIBLE_TEST_CLI, args, env);
}

json storedSession(const std::string& db, std::int64_t id) {
  const testing::CliResult r =
      crucible({"sessions", "show", std::to_string(id), "--db", db, "--json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return json::parse(r.out)["session"];
}

class EmbeddedCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("crucible-embedded-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override {
    if (!fs::exists(fixture("qwen2") / "config.json")) {
      GTEST_FAIL() << "no tiny model in $CRUCIBLE_EMBEDDED_FIXTURES (run through ctest)";
    }
  }
  static inline fs::path dir_;
};

TEST_F(EmbeddedCli, GarbageAnswersAreStoredWithTheirModelAndJudgedInvalid) {
  const std::string db = (dir_ / "best-of-n.db").string();
  const std::string model = fixture("qwen2").string();
  const testing::CliResult run = crucible({"generate", kReference, "--model", model, "-n", "2",
                                           "--max-tokens", "24", "--sample-seed", "4", "--device",
                                           "cpu", "--db", db, "--json", "--backend", "interpret"});
  ASSERT_EQ(run.exitCode, 1) << run.err << run.out;  // ran, none verified
  const json result = json::parse(run.out);
  ASSERT_EQ(result["candidates"].size(), 2u) << run.out;
  for (const json& c : result["candidates"]) {
    EXPECT_EQ(c["origin"], "embedded");
    EXPECT_EQ(c["model"], model);
    EXPECT_EQ(c["verdict"], "invalid") << c;
    EXPECT_NE(c["error"].get<std::string>().find("no code block"), std::string::npos) << c;
  }
  EXPECT_TRUE(result["best"].is_null());
  EXPECT_TRUE(result["error"].is_null());

  const json session = storedSession(db, result["session"]);
  ASSERT_EQ(session["candidates"].size(), 2u);
  for (const json& c : session["candidates"]) {
    EXPECT_EQ(c["origin"], "embedded");
    EXPECT_EQ(c["model"], model);
    EXPECT_NE(c["prompt"].get<std::string>().find("class Model"), std::string::npos);
    EXPECT_FALSE(c["raw_response"].get<std::string>().empty());
    ASSERT_EQ(c["evaluations"].size(), 1u);
    EXPECT_EQ(c["evaluations"][0]["evaluation"]["verdict"], "invalid");
  }
}

TEST_F(EmbeddedCli, TextOutputSaysWhatItLoaded) {
  const testing::CliResult run =
      crucible({"generate", kReference, "--model", fixture("qwen2").string(), "-n", "1",
                "--max-tokens", "8", "--no-db", "--backend", "interpret"});
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_NE(run.err.find("loading " + fixture("qwen2").string()), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("loaded Qwen2ForCausalLM"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("invalid"), std::string::npos) << run.out;
}

TEST_F(EmbeddedCli, MissingOrBrokenModelsAreNamed) {
  const std::string missing = (dir_ / "no-such-model").string();
  const testing::CliResult gone = crucible({"generate", kReference, "--model", missing, "--no-db"});
  EXPECT_EQ(gone.exitCode, 2);
  EXPECT_NE(gone.err.find(missing), std::string::npos) << gone.err;
  const testing::CliResult gguf =
      crucible({"generate", kReference, "--model", missing + ".gguf", "--no-db"});
  EXPECT_EQ(gguf.exitCode, 2);
  EXPECT_NE(gguf.err.find(missing + ".gguf: no such model folder or .gguf file"), std::string::npos)
      << gguf.err;

  // A folder that is not a model: the engine's message names the file it needed.
  const fs::path empty = dir_ / "empty-model";
  fs::create_directories(empty);
  const testing::CliResult broken = crucible({"generate", kReference, "--model", empty.string(),
                                              "--no-db", "--json", "--backend", "interpret"});
  EXPECT_EQ(broken.exitCode, 3) << broken.err;
  EXPECT_NE(
      json::parse(broken.out)["error"].get<std::string>().find((empty / "config.json").string()),
      std::string::npos)
      << broken.out;

  const testing::CliResult device = crucible(
      {"generate", kReference, "--model", fixture("qwen2").string(), "--device", "tpu", "--no-db"});
  EXPECT_EQ(device.exitCode, 2);
  EXPECT_NE(device.err.find("--device tpu"), std::string::npos) << device.err;
  EXPECT_EQ(crucible({"generate", kReference, "--dtype", "float16", "--no-db"}).exitCode, 2);
}

TEST_F(EmbeddedCli, CtrlCMidGenerationKeepsWhatWasStored) {
  // Refine rounds of one 400-token answer each (a model without stop ids runs to max_tokens):
  // Ctrl-C once round 2 asks the model, after candidate 1 was stored and judged.
  const std::string db = (dir_ / "interrupt.db").string();
  std::vector<std::string> args = {CRUCIBLE_TEST_CLI,
                                   "generate",
                                   kReference,
                                   "--model",
                                   fixture("qwen2-endless").string(),
                                   "--search",
                                   "refine",
                                   "--rounds",
                                   "3",
                                   "-n",
                                   "1",
                                   "--max-tokens",
                                   "400",
                                   "--db",
                                   db,
                                   "--backend",
                                   "interpret"};
  const auto run = testing::interruptWhenSeen(args, "round 2:");
  ASSERT_TRUE(run.sawMarker) << run.err;
  ASSERT_TRUE(run.exited) << run.err;
  EXPECT_EQ(run.exitCode, 3) << run.err;
  EXPECT_NE(run.err.find("interrupted; what was stored is kept"), std::string::npos) << run.err;
  // The cancel reaches the engine within a token step; its grace before a kill is 10 s.
  EXPECT_LT(run.afterInterrupt, std::chrono::seconds(10)) << run.err;

  const json session = storedSession(db, 1);
  EXPECT_EQ(session["kind"], "generate");
  ASSERT_EQ(session["candidates"].size(), 1u) << session;
  EXPECT_EQ(session["candidates"][0]["origin"], "embedded");
  ASSERT_EQ(session["candidates"][0]["evaluations"].size(), 1u);
  EXPECT_EQ(session["candidates"][0]["evaluations"][0]["evaluation"]["verdict"], "invalid");
}

}  // namespace
}  // namespace crucible
