#include "core/llm/safetensors.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/llm/mapped_file.h"
#include "core/llm/model_error.h"

namespace crucible::llm {

std::size_t dtypeSize(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2")
    return 1;
  return 0;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path)
    : file_(std::make_unique<MappedFile>(path)) {
  const std::string where = path.string();
  if (file_->size() < 8) throw ModelError(where + ": shorter than the 8-byte header length");
  std::uint64_t headerLength = 0;
  std::memcpy(&headerLength, file_->data(), 8);  // little-endian on every supported host
  if (headerLength > file_->size() - 8) throw ModelError(where + ": header runs past the file");
  const auto* headerStart = reinterpret_cast<const char*>(file_->data()) + 8;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(headerStart, headerStart + headerLength);
  } catch (const nlohmann::json::parse_error& e) {
    throw ModelError(where + ": header is not JSON: " + e.what());
  }
  if (!header.is_object()) throw ModelError(where + ": header is not a JSON object");
  const std::byte* base = file_->data() + 8 + headerLength;
  const std::size_t available = file_->size() - 8 - headerLength;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    try {
      TensorView view;
      view.dtype = entry.at("dtype").get<std::string>();
      view.shape = entry.at("shape").get<std::vector<std::int64_t>>();
      const auto offsets = entry.at("data_offsets").get<std::vector<std::uint64_t>>();
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > available)
        throw ModelError("data_offsets outside the file");
      std::size_t expected = dtypeSize(view.dtype);
      if (expected == 0) throw ModelError("unknown dtype " + view.dtype);
      for (std::int64_t d : view.shape) expected *= static_cast<std::size_t>(d);
      if (expected != offsets[1] - offsets[0])
        throw ModelError("data_offsets do not match dtype and shape");
      view.data = base + offsets[0];
      view.bytes = offsets[1] - offsets[0];
      tensors_.emplace(name, std::move(view));
    } catch (const std::exception& e) {
      throw ModelError(where + ": tensor '" + name + "': " + e.what());
    }
  }
}

SafetensorsFile::~SafetensorsFile() = default;
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;

SafetensorsFolder::SafetensorsFolder(const std::filesystem::path& folder) : folder_(folder) {
  std::vector<std::filesystem::path> paths;
  const auto index = folder / "model.safetensors.index.json";
  if (std::filesystem::exists(index)) {
    std::ifstream in(index);
    try {
      std::set<std::string> shards;
      const nlohmann::json parsed = nlohmann::json::parse(in);  // outlives the loop below
      for (const auto& [name, file] : parsed.at("weight_map").items())
        shards.insert(file.get<std::string>());
      for (const auto& shard : shards) paths.push_back(folder / shard);
    } catch (const nlohmann::json::exception& e) {
      throw ModelError(index.string() + ": " + e.what());
    }
  } else if (std::filesystem::exists(folder / "model.safetensors")) {
    paths.push_back(folder / "model.safetensors");
  } else {
    throw ModelError(folder.string() +
                     ": no model.safetensors or model.safetensors.index.json in the folder");
  }
  files_.reserve(paths.size());
  for (const auto& p : paths) files_.emplace_back(p);
  for (const auto& f : files_)
    for (const auto& [name, view] : f.tensors()) index_[name] = &view;
}

const TensorView* SafetensorsFolder::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

const TensorView& SafetensorsFolder::at(const std::string& name) const {
  if (const TensorView* v = find(name)) return *v;
  throw ModelError(folder_.string() + ": checkpoint has no tensor '" + name + "'");
}

}  // namespace crucible::llm
