// The model engine's client without a model (fast, default run): a missing engine and a missing
// model are clear errors that name them, errors are events that leave the engine running, and
// --device/--dtype are checked before anything starts. The suite with tiny models that generate
// is tests/llm/embedded_*.cpp (label model).

#include <gtest/gtest.h>

#include "core/generate/generator_factory.h"
#include "core/generate/model_process.h"
#include "core/util/locations.h"
#include "core/verify/verifier.h"
#include "tests/unit/temp_dir.h"

namespace crucible::generate {
namespace {

TEST(ModelProcess, AMissingEngineIsNamedWhenItIsUsed) {
  ModelProcess engine({"/nonexistent/bin/crucible-model"});
  try {
    engine.load({"/models/any", "cpu", "auto"}, {});
    FAIL() << "loaded without an engine";
  } catch (const GenerateError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/bin/crucible-model"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("could not start"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(engine.running());
}

class WithEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (locateModelEngine().empty()) GTEST_SKIP() << "this build has no crucible-model";
  }
};

TEST_F(WithEngine, AMissingModelIsTheEnginesErrorAndTheEngineStays) {
  test::TempDir dir;
  const std::string missing = (dir.path() / "no-model").string();
  ModelProcess engine;
  try {
    engine.load({missing, "cpu", "auto"}, {});
    FAIL() << "loaded a folder that does not exist";
  } catch (const GenerateError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_TRUE(engine.running());
  EngineRequest ask;
  ask.prompt = "x";
  try {
    engine.generate(ask, {}, {});
    FAIL() << "generated without a model";
  } catch (const GenerateError& e) {
    EXPECT_NE(std::string(e.what()).find("no model loaded"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(engine.running());
}

TEST_F(WithEngine, AStopDuringALoadEndsTheEngine) {
  ModelProcess engine;
  std::stop_source stop;
  stop.request_stop();  // the protocol cannot cancel a load: the process is killed instead
  EXPECT_FALSE(engine.load({"/models/any", "cpu", "auto"}, stop.get_token()));
  EXPECT_FALSE(engine.running());
}

TEST(EmbeddedChoice, DeviceAndDtypeAreCheckedAndOnlyForEmbeddedModels) {
  test::TempDir dir;
  GeneratorOptions options;
  options.model = dir.path().string();
  options.device = "tpu";
  EXPECT_THROW(makeGenerator(options), BadInput);
  options.device = "cuda:x";
  EXPECT_THROW(makeGenerator(options), BadInput);
  options.device = "cuda:1";
  options.dtype = "int3";
  EXPECT_THROW(makeGenerator(options), BadInput);
  GeneratorOptions synth;
  synth.device = "cpu";
  EXPECT_THROW(makeGenerator(synth), BadInput);
  if (!locateModelEngine().empty()) {
    options.dtype = "bfloat16";
    auto generator = makeGenerator(options);
    EXPECT_EQ(generator->origin(), "embedded");
    EXPECT_EQ(generator->modelId(), dir.path().string());
  }
}

}  // namespace
}  // namespace crucible::generate
