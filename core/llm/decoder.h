// The forward pass as the generator sees it: a batch of rows that share one prompt, stepped one
// token at a time. The libtorch implementation lives in core/llm/torch/ (only crucible-model links
// it); everything above this interface (tokenizer, templates, sampling, protocol) is libtorch-free.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace crucible::llm {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual std::int64_t vocabSize() const = 0;
  // Runs the prompt once, then holds `rows` copies of its cache. Returns the last position's
  // logits.
  virtual std::vector<float> prefill(const std::vector<int>& ids, int rows) = 0;
  // Feeds tokens[i] to row i; returns rows x vocab logits, row-major.
  virtual std::vector<float> step(const std::vector<int>& tokens) = 0;
  // Keeps only the listed rows (in that order), dropping finished candidates from the batch.
  virtual void keepRows(const std::vector<int>& rows) = 0;
  // Every position's logits of one sequence, from an empty cache (tests, scoring).
  virtual std::vector<std::vector<float>> logits(const std::vector<int>& ids) = 0;
  // Device, dtype and whatever the implementation wants to report.
  virtual nlohmann::json describe() const = 0;
};

}  // namespace crucible::llm
