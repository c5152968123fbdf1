// Byte-level BPE from a Hugging Face tokenizer.json (Llama-3, Qwen2/2.5/3, SmolLM2 / GPT-2 style),
// equal to the `tokenizers` library id for id: added tokens split out first, the family's split
// pattern, BPE merges (with Llama-3's ignore_merges), the post-processor's BOS.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/llm/pretokenizer.h"

namespace crucible::llm {

struct AddedToken {
  int id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;  // swallows whitespace before it
  bool rstrip = false;  // swallows whitespace after it
};

// One step of the pre-tokenizer pipeline, applied to every piece of the previous step.
struct PreTokenizerStep {
  enum class Kind { Split, IndividualDigits } kind = Kind::Split;
  SplitPattern pattern = SplitPattern::Gpt2;
};

class Tokenizer {
 public:
  // `source` names the file in error messages. Throws ModelError on anything unsupported.
  static Tokenizer fromJson(const nlohmann::json& json, const std::string& source);
  static Tokenizer fromFile(const std::filesystem::path& path);

  std::vector<int> encode(std::string_view text, bool addSpecialTokens = true) const;
  // Raw bytes (possibly ending inside a UTF-8 sequence); special tokens as their text unless
  // skipped.
  std::string decode(const std::vector<int>& ids, bool skipSpecialTokens = false) const;
  std::string tokenBytes(int id) const;

  std::optional<int> tokenId(std::string_view content) const;
  bool isSpecial(int id) const;
  int vocabSize() const { return static_cast<int>(idToBytes_.size()); }
  const std::vector<AddedToken>& addedTokens() const { return added_; }
  const std::vector<PreTokenizerStep>& preTokenizerSteps() const { return steps_; }

 private:
  void encodeOrdinary(std::string_view text, std::vector<int>& out) const;
  void bpe(std::string_view piece, std::vector<int>& out) const;

  std::unordered_map<std::string, int> bytesToId_;  // raw bytes -> id (vocab and added tokens)
  std::vector<std::string> idToBytes_;
  std::vector<bool> special_;
  std::unordered_map<std::uint64_t, std::pair<int, int>> merges_;  // (left, right) -> (rank, id)
  std::vector<AddedToken> added_;
  std::vector<PreTokenizerStep> steps_;
  bool addPrefixSpace_ = false;
  bool ignoreMerges_ = false;
  bool nfc_ = false;         // the normalizer: NFC or none
  std::vector<int> prefix_;  // post-processor ids around a single sequence
  std::vector<int> suffix_;
};

}  // namespace crucible::llm
