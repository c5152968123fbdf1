// Read-only view of a GGUF file (ggml's docs/gguf.md, versions 2 and 3): typed key/value metadata
// (tokenizer.ggml.*, general.*, <arch>.*), tensor infos (dims innermost-first, ggml type, offset
// from the aligned data start), and dequantisation of F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q4_K and Q6_K to float32. core/llm/gguf_model.h builds a model from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace crucible::llm {

enum class GgmlType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  BF16 = 30,
};

struct GgufTensor {
  std::string name;
  std::vector<std::int64_t> dims;  // innermost first, as stored (reverse for a torch shape)
  GgmlType type = GgmlType::F32;
  const std::byte* data = nullptr;
  std::size_t bytes = 0;
  std::int64_t elements() const;
};

class MappedFile;

class GgufFile {
 public:
  // Throws ModelError naming the file and what is wrong (bad magic, truncation, ...).
  explicit GgufFile(const std::filesystem::path& path);
  ~GgufFile();
  std::uint32_t version() const { return version_; }
  // Metadata as JSON: integers, floats, bools, strings, arrays of them.
  const nlohmann::json& metadata() const { return metadata_; }
  const std::map<std::string, GgufTensor>& tensors() const { return tensors_; }

 private:
  std::unique_ptr<MappedFile> file_;
  std::uint32_t version_ = 0;
  nlohmann::json metadata_ = nlohmann::json::object();
  std::map<std::string, GgufTensor> tensors_;
};

// Elements per block and bytes per block of a type; {0, 0} for a type this reader cannot decode.
std::pair<std::size_t, std::size_t> ggmlBlock(GgmlType type);
std::string ggmlTypeName(GgmlType type);
// All elements of the tensor as float32, in storage order. Throws ModelError for other types.
std::vector<float> dequantize(const GgufTensor& tensor);
// The same into `out` (tensor.elements() floats), e.g. straight into a tensor's storage.
void dequantizeInto(const GgufTensor& tensor, float* out);

}  // namespace crucible::llm
