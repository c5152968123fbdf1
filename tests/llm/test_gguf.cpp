// crucible's GGUF reader against the `gguf` package's writer and reference dequantiser
// (fixture from make_gguf.py): metadata of every value type, shapes, and values of each type.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/llm/gguf.h"
#include "core/llm/model_error.h"

namespace fs = std::filesystem;
using namespace crucible::llm;

namespace {
fs::path fixture() {
  const char* dir = std::getenv("CRUCIBLE_MODEL_FIXTURES");
  return fs::path(dir ? dir : "") / "gguf";
}
}  // namespace

TEST(Gguf, MetadataOfEveryValueType) {
  const GgufFile file(fixture() / "tiny.gguf");
  const auto& m = file.metadata();
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(m.at("general.architecture"), "llama");
  EXPECT_EQ(m.at("test.u32").get<std::uint64_t>(), 4000000000u);
  EXPECT_EQ(m.at("test.i32").get<int>(), -7);
  EXPECT_EQ(m.at("test.f32").get<double>(), 0.5);
  EXPECT_EQ(m.at("test.bool"), true);
  EXPECT_EQ(m.at("test.str"), "héllo <|im_start|>");
  EXPECT_EQ(m.at("test.u64").get<std::uint64_t>(), 1ull << 40);
  EXPECT_EQ(m.at("test.tokens"), (nlohmann::json{"a", "b c", "Ġd"}));
  EXPECT_EQ(m.at("test.scores"), (nlohmann::json{0.25, -1.5}));
}

TEST(Gguf, DequantizesEachTypeLikeTheReference) {
  const GgufFile file(fixture() / "tiny.gguf");
  std::ifstream in(fixture() / "expected.json");
  const auto expected = nlohmann::json::parse(in);
  ASSERT_EQ(file.tensors().size(), expected.size());
  for (const auto& [name, want] : expected.items()) {
    SCOPED_TRACE(name);
    const GgufTensor& t = file.tensors().at(name);
    std::vector<std::int64_t> shape(t.dims.rbegin(), t.dims.rend());  // stored innermost first
    EXPECT_EQ(shape, want["shape"].get<std::vector<std::int64_t>>());
    const std::vector<float> got = dequantize(t);
    const auto values = want["values"].get<std::vector<float>>();
    ASSERT_EQ(got.size(), values.size());
    float worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::abs(got[i] - values[i]) / std::max(1.0f, std::abs(values[i])));
    EXPECT_LT(worst, 1e-6f);
  }
}

TEST(Gguf, TruncatedOrForeignFilesAreErrorsNamingTheFile) {
  const fs::path dir = fs::temp_directory_path() / "crucible_gguf_test";
  fs::create_directories(dir);
  std::ifstream src(fixture() / "tiny.gguf", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(src)), {});
  std::ofstream(dir / "cut.gguf", std::ios::binary) << bytes.substr(0, 100);
  std::ofstream(dir / "foreign.gguf", std::ios::binary) << "GGML not really a gguf file";
  for (const char* name : {"cut.gguf", "foreign.gguf"}) {
    try {
      GgufFile f(dir / name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}
