// The model engine's file readers and sampler: safetensors, config.json, sampling rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <vector>

#include "core/llm/model_config.h"
#include "core/llm/model_error.h"
#include "core/llm/safetensors.h"
#include "core/llm/sampler.h"
#include "temp_dir.h"

using namespace crucible::llm;
namespace fs = std::filesystem;

namespace {
void writeSafetensors(const fs::path& path, const nlohmann::json& header, const std::string& data) {
  const std::string text = header.dump();
  const std::uint64_t n = text.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << text << data;
}

std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ModelSafetensors, ReadsDtypeShapeAndBytes) {
  const crucible::test::TempDir dir;
  const fs::path p = dir.path() / "one.safetensors";
  const float values[3] = {1.5f, -2.0f, 3.25f};
  writeSafetensors(p,
                   {{"__metadata__", {{"format", "pt"}}},
                    {"w", {{"dtype", "F32"}, {"shape", {3}}, {"data_offsets", {0, 12}}}}},
                   std::string(reinterpret_cast<const char*>(values), 12));
  const SafetensorsFile file(p);
  ASSERT_EQ(file.tensors().size(), 1u);
  const TensorView& w = file.tensors().at("w");
  EXPECT_EQ(w.dtype, "F32");
  EXPECT_EQ(w.shape, (std::vector<std::int64_t>{3}));
  float back[3];
  std::memcpy(back, w.data, 12);
  EXPECT_EQ(back[2], 3.25f);
}

TEST(ModelSafetensors, MalformedFilesAreErrorsNamingFileAndTensor) {
  const crucible::test::TempDir dir;
  const fs::path p = dir.path() / "bad.safetensors";
  writeSafetensors(p, {{"w", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {0, 16}}}}},
                   std::string(8, '\0'));
  std::string m = messageOf([&] { SafetensorsFile f(p); });
  EXPECT_NE(m.find("bad.safetensors"), std::string::npos) << m;
  EXPECT_NE(m.find("'w'"), std::string::npos) << m;
  writeSafetensors(p, {{"w", {{"dtype", "F32"}, {"shape", {3}}, {"data_offsets", {0, 8}}}}},
                   std::string(8, '\0'));
  EXPECT_NE(messageOf([&] { SafetensorsFile f(p); }).find("do not match"), std::string::npos);
  std::ofstream(p, std::ios::binary) << "\xff\xff\xff\xff\xff\xff\xff\x7f{}";
  EXPECT_NE(messageOf([&] { SafetensorsFile f(p); }).find("past the file"), std::string::npos);
  EXPECT_NE(messageOf([&] {
              SafetensorsFolder f(p.parent_path() / "nothing");
            }).find("no model.safetensors"),
            std::string::npos);
}

TEST(ModelConfigJson, ReadsFamiliesFlagsAndLlama3Scaling) {
  const auto llama = ModelConfig::fromJson(
      {{"architectures", {"LlamaForCausalLM"}},
       {"vocab_size", 100},
       {"hidden_size", 64},
       {"intermediate_size", 128},
       {"num_hidden_layers", 2},
       {"num_attention_heads", 4},
       {"num_key_value_heads", 2},
       {"tie_word_embeddings", true},
       {"rope_scaling",
        {{"rope_type", "llama3"}, {"factor", 8.0}, {"original_max_position_embeddings", 8192}}}},
      "config.json");
  EXPECT_EQ(llama.headDim, 16);
  EXPECT_EQ(llama.ropeScaling.type, "llama3");
  EXPECT_FALSE(llama.attentionBias);
  // embed (tied) + 2 layers (q 64x64, k/v 64x32 each, o 64x64, 3 MLP 64x128, 2 norms) + final norm
  EXPECT_EQ(llama.parameterCount(), 100 * 64 + 2 * (64 * 128 + 64 * 64 + 3 * 64 * 128 + 128) + 64);
  auto qwen2 = nlohmann::json{{"architectures", {"Qwen2ForCausalLM"}},
                              {"vocab_size", 10},
                              {"hidden_size", 8},
                              {"intermediate_size", 8},
                              {"num_hidden_layers", 1},
                              {"num_attention_heads", 2}};
  EXPECT_TRUE(ModelConfig::fromJson(qwen2, "c").attentionBias);
  qwen2["architectures"] = {"GPTNeoXForCausalLM"};
  EXPECT_NE(
      messageOf([&] { ModelConfig::fromJson(qwen2, "c.json"); }).find("unsupported architecture"),
      std::string::npos);
}

TEST(ModelSampler, GreedyTopKOneAndTinyTopPAllPickTheArgmax) {
  const std::vector<float> logits = {0.1f, 2.0f, 1.9f, -1.0f};
  EXPECT_EQ(Sampler({0.0, 0, 1.0, 0}, 0).sample(logits), 1);
  Sampler topK({1.0, 1, 1.0, 0}, 42), topP({1.0, 0, 1e-6, 0}, 42);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(topK.sample(logits), 1);
    EXPECT_EQ(topP.sample(logits), 1);
  }
}

// The draw over a fully sorted vocabulary, as the sampler made it before it sorted only the
// prefix that top-k and top-p keep.
int fullSortDraw(const std::vector<float>& logits, const SamplingParams& p, std::mt19937_64& rng) {
  std::vector<int> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  if (p.topK > 0) order.resize(std::min<std::size_t>(p.topK, order.size()));
  std::vector<double> probs;
  double total = 0;
  for (int id : order)
    total += probs.emplace_back(std::exp((logits[id] - logits[order[0]]) / p.temperature));
  std::size_t n = order.size();
  double mass = 0;
  for (std::size_t i = 0; i < order.size() && p.topP < 1.0; ++i)
    if ((mass += probs[i] / total) >= p.topP) {
      n = i + 1;
      break;
    }
  double r = std::uniform_real_distribution<double>(
      0.0,
      std::accumulate(probs.begin(), probs.begin() + static_cast<std::ptrdiff_t>(n), 0.0))(rng);
  for (std::size_t i = 0; i < n; ++i)
    if ((r -= probs[i]) < 0) return order[i];
  return order[n - 1];
}

TEST(ModelSampler, PartialSortDrawsWhatAFullSortDraws) {
  std::mt19937_64 gen(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(49152);
  for (float& l : logits) l = std::round(normal(gen) * 8) / 8;  // ties too
  for (const SamplingParams p : {SamplingParams{0.7, 0, 0.95, 0}, SamplingParams{3.0, 0, 0.9, 0},
                                 SamplingParams{1.0, 40, 0.95, 0}, SamplingParams{1.0, 0, 1.0, 0},
                                 SamplingParams{0.5, 1000, 1.0, 0}}) {
    Sampler sampler(p, 17);
    std::mt19937_64 rng(17);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(sampler.sample(logits), fullSortDraw(logits, p, rng));
  }
}

TEST(ModelSampler, SameSeedSameDrawsAndFrequenciesFollowTheSoftmax) {
  const std::vector<float> logits = {0.0f, std::log(3.0f)};  // probabilities 1/4, 3/4
  Sampler a({1.0, 0, 1.0, 0}, 9), b({1.0, 0, 1.0, 0}, 9);
  int ones = 0;
  for (int i = 0; i < 4000; ++i) {
    const int x = a.sample(logits);
    EXPECT_EQ(x, b.sample(logits));
    ones += x;
  }
  EXPECT_NEAR(ones / 4000.0, 0.75, 0.03);
}
