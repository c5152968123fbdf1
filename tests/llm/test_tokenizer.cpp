// crucible's byte-level BPE against Hugging Face `tokenizers`, id for id, on a hard corpus, for
// each family's configuration. The fixtures come from make_tokenizers.py (a CTest fixture).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/llm/tokenizer.h"

namespace fs = std::filesystem;
using crucible::llm::Tokenizer;

namespace {
fs::path fixtures() {
  const char* dir = std::getenv("CRUCIBLE_MODEL_FIXTURES");
  return dir ? fs::path(dir) : fs::path();
}

class TokenizerFamily : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerFamily, MatchesHuggingFaceIdForId) {
  const fs::path folder = fixtures() / "tokenizers" / GetParam();
  ASSERT_TRUE(fs::exists(folder / "tokenizer.json")) << "missing fixture " << folder;
  const Tokenizer tok = Tokenizer::fromFile(folder / "tokenizer.json");
  std::ifstream in(folder / "expected.jsonl");
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    const auto text = row["text"].get<std::string>();
    EXPECT_EQ(tok.encode(text, true), row["ids"].get<std::vector<int>>()) << "text: " << text;
    const auto plain = row["ids_plain"].get<std::vector<int>>();
    EXPECT_EQ(tok.encode(text, false), plain) << "text: " << text;
    // Byte-level BPE is lossless: decoding gives the normalized text back, special tokens included
    // (except the whitespace an lstrip token swallows).
    if (text.find("<mask>") == std::string::npos) {
      EXPECT_EQ(tok.decode(plain), row["normalized"].get<std::string>()) << "text: " << text;
    }
    ++rows;
  }
  EXPECT_GT(rows, 30);
}

INSTANTIATE_TEST_SUITE_P(Families, TokenizerFamily, ::testing::Values("llama3", "qwen2", "gpt2"));
}  // namespace
