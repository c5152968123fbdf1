#pragma once
// Writes value packs (.ctp) from tests, byte for byte as docs/WORKER_PROTOCOL.md specifies.

#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace crucible::test {

struct PackTensor {
  std::string dtype = "float32";
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;
};

inline PackTensor floats(std::vector<float> values, std::vector<std::int64_t> shape = {}) {
  PackTensor t;
  t.shape =
      shape.empty() ? std::vector<std::int64_t>{static_cast<std::int64_t>(values.size())} : shape;
  t.bytes.resize(values.size() * 4);
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

/// A tensor of `dtype` from values of the matching C++ type (double for float64, ...).
template <typename T>
PackTensor tensorOf(std::string dtype, const std::vector<T>& values,
                    std::vector<std::int64_t> shape = {}) {
  PackTensor t;
  t.dtype = std::move(dtype);
  t.shape =
      shape.empty() ? std::vector<std::int64_t>{static_cast<std::int64_t>(values.size())} : shape;
  t.bytes.resize(values.size() * sizeof(T));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

/// A pack's bytes, as the worker writes them.
inline std::string packBytes(const std::vector<PackTensor>& tensors,
                             nlohmann::json value = nullptr) {
  nlohmann::json header;
  header["tensors"] = nlohmann::json::array();
  std::vector<unsigned char> data;
  nlohmann::json refs = nlohmann::json::array();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    header["tensors"].push_back({{"dtype", tensors[i].dtype},
                                 {"shape", tensors[i].shape},
                                 {"offset", data.size()},
                                 {"nbytes", tensors[i].bytes.size()}});
    data.insert(data.end(), tensors[i].bytes.begin(), tensors[i].bytes.end());
    refs.push_back({{"tensor", i}});
  }
  header["value"] =
      value.is_null() ? (tensors.size() == 1 ? refs[0] : nlohmann::json{{"tuple", refs}}) : value;
  const std::string text = header.dump();
  const std::uint64_t length = text.size();
  std::string out = "CRUCTP01";
  out.append(reinterpret_cast<const char*>(&length), 8);
  out += text;
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  return out;
}

inline void writePack(const std::string& path, const std::vector<PackTensor>& tensors,
                      nlohmann::json value = nullptr) {
  const std::string bytes = packBytes(tensors, std::move(value));
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace crucible::test
