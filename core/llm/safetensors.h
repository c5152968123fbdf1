// Read-only view of safetensors checkpoints: the 8-byte header length, the JSON header (dtype,
// shape outermost-first, data_offsets after the header), the raw bytes mapped with mmap.
// A Hugging Face folder holds model.safetensors or shards listed by model.safetensors.index.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace crucible::llm {

struct TensorView {
  std::string dtype;  // F32, F16, BF16, ...
  std::vector<std::int64_t> shape;
  const std::byte* data = nullptr;
  std::size_t bytes = 0;
};

class MappedFile;

class SafetensorsFile {
 public:
  // Throws ModelError naming the file for anything malformed (offsets outside the file, ...).
  explicit SafetensorsFile(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&&) noexcept;
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }

 private:
  std::unique_ptr<MappedFile> file_;
  std::map<std::string, TensorView> tensors_;
};

// Every tensor of a model folder (single file or shards), by name.
class SafetensorsFolder {
 public:
  explicit SafetensorsFolder(const std::filesystem::path& folder);
  const TensorView* find(const std::string& name) const;
  const TensorView& at(const std::string& name) const;  // throws ModelError naming the tensor
  std::size_t size() const { return index_.size(); }

 private:
  std::filesystem::path folder_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, const TensorView*> index_;
};

std::size_t dtypeSize(const std::string& dtype);  // 0 for an unknown dtype

}  // namespace crucible::llm
