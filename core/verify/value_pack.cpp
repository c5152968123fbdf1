#include "core/verify/value_pack.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/util/locations.h"

namespace crucible {

namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
  bool floating;
  std::optional<std::uint64_t> poison;
};

constexpr std::array<DTypeInfo, 10> kDTypes = {{
    {DType::Float64, "float64", 8, true, 0x7FF8DEADDEADDEADULL},
    {DType::Float32, "float32", 4, true, 0x7FC0DEADULL},
    {DType::Float16, "float16", 2, true, 0x7E6DULL},
    {DType::BFloat16, "bfloat16", 2, true, 0x7FDEULL},
    {DType::Int64, "int64", 8, false, 0x7EADBEEFDEADBEEFULL},
    {DType::Int32, "int32", 4, false, 0x7EADBEEFULL},
    {DType::Int16, "int16", 2, false, 0x7EADULL},
    {DType::Int8, "int8", 1, false, 0x5AULL},
    {DType::UInt8, "uint8", 1, false, 0x5AULL},
    {DType::Bool, "bool", 1, false, std::nullopt},
}};

const DTypeInfo& info(DType dtype) {
  for (const auto& i : kDTypes) {
    if (i.dtype == dtype) return i;
  }
  return kDTypes[1];
}

constexpr std::string_view kMagic = "CRUCTP01";

double halfToDouble(std::uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  double value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), -24);
  } else if (exponent == 31) {
    value = mantissa == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  } else {
    value = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -value : value;
}

template <typename T>
T readAs(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

void collectTensorRefs(const nlohmann::json& value, std::vector<std::size_t>& out) {
  if (value.is_object()) {
    if (value.contains("tensor")) {
      out.push_back(value["tensor"].get<std::size_t>());
      return;
    }
    for (const auto& [key, child] : value.items()) collectTensorRefs(child, out);
  } else if (value.is_array()) {
    for (const auto& child : value) collectTensorRefs(child, out);
  }
}
}  // namespace

std::optional<DType> dtypeFromString(std::string_view name) {
  for (const auto& i : kDTypes) {
    if (i.name == name) return i.dtype;
  }
  return std::nullopt;
}

std::string_view toString(DType dtype) {
  return info(dtype).name;
}
std::size_t elementSize(DType dtype) {
  return info(dtype).size;
}
bool isFloating(DType dtype) {
  return info(dtype).floating;
}
std::optional<std::uint64_t> poisonBits(DType dtype) {
  return info(dtype).poison;
}

TensorData::TensorData(DType dtype, std::vector<std::int64_t> shape, const std::byte* data)
    : dtype_(dtype), shape_(std::move(shape)), data_(data), numel_(1) {
  for (auto d : shape_) numel_ *= static_cast<std::size_t>(d);
}

double TensorData::at(std::size_t i) const {
  const std::byte* p = data_ + i * elementSize(dtype_);
  switch (dtype_) {
    case DType::Float64:
      return readAs<double>(p);
    case DType::Float32:
      return readAs<float>(p);
    case DType::Float16:
      return halfToDouble(readAs<std::uint16_t>(p));
    case DType::BFloat16:
      return std::bit_cast<float>(static_cast<std::uint32_t>(readAs<std::uint16_t>(p)) << 16);
    case DType::Int64:
      return static_cast<double>(readAs<std::int64_t>(p));
    case DType::Int32:
      return readAs<std::int32_t>(p);
    case DType::Int16:
      return readAs<std::int16_t>(p);
    case DType::Int8:
      return readAs<std::int8_t>(p);
    case DType::UInt8:
      return readAs<std::uint8_t>(p);
    case DType::Bool:
      return readAs<std::uint8_t>(p) != 0 ? 1.0 : 0.0;
  }
  return 0;
}

std::uint64_t TensorData::bitsAt(std::size_t i) const {
  const std::byte* p = data_ + i * elementSize(dtype_);
  switch (elementSize(dtype_)) {
    case 8:
      return readAs<std::uint64_t>(p);
    case 4:
      return readAs<std::uint32_t>(p);
    case 2:
      return readAs<std::uint16_t>(p);
    default:
      return readAs<std::uint8_t>(p);
  }
}

std::string TensorData::shapeText() const {
  std::string text = "[";
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape_[i]);
  }
  return text + "]";
}

ValuePack ValuePack::load(const std::string& path) {
  auto raw = readFile(path);
  if (!raw) throw ValuePackError(path + ": cannot open");
  return parse(*raw, path);
}

ValuePack ValuePack::parse(std::string_view raw, const std::string& path) {
  ValuePack pack;
  if (raw.size() < 16 || std::string_view(raw.data(), 8) != kMagic) {
    throw ValuePackError(path + ": not a value pack (bad magic)");
  }
  std::uint64_t headerLength = 0;
  std::memcpy(&headerLength, raw.data() + 8, 8);  // little-endian on every platform we build for
  if (headerLength > raw.size() - 16) throw ValuePackError(path + ": header runs past the file");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(raw.begin() + 16, raw.begin() + 16 + headerLength);
  } catch (const nlohmann::json::exception& e) {
    throw ValuePackError(path + ": header is not JSON: " + e.what());
  }
  if (!header.is_object()) throw ValuePackError(path + ": header is not a JSON object");
  const std::size_t dataStart = 16 + headerLength;
  pack.bytes_.resize(raw.size() - dataStart);
  std::memcpy(pack.bytes_.data(), raw.data() + dataStart, pack.bytes_.size());
  pack.value_ = header.value("value", nlohmann::json());

  const auto& tensors = header.value("tensors", nlohmann::json::array());
  for (const auto& t : tensors) {
    auto dtype = dtypeFromString(t.value("dtype", ""));
    if (!dtype) throw ValuePackError(path + ": unknown dtype " + t.value("dtype", "?"));
    std::vector<std::int64_t> shape = t.value("shape", std::vector<std::int64_t>{});
    std::size_t numel = 1;
    for (auto d : shape) {
      if (d < 0) throw ValuePackError(path + ": negative dimension");
      numel *= static_cast<std::size_t>(d);
    }
    const auto offset = t.value("offset", std::uint64_t{0});
    const auto nbytes = t.value("nbytes", std::uint64_t{0});
    if (nbytes != numel * elementSize(*dtype) || offset > pack.bytes_.size() ||
        nbytes > pack.bytes_.size() - offset) {
      throw ValuePackError(path + ": tensor " + std::to_string(pack.tensors_.size()) +
                           " has inconsistent size or offset");
    }
    pack.tensors_.emplace_back(*dtype, std::move(shape), pack.bytes_.data() + offset);
  }
  std::vector<std::size_t> refs;
  collectTensorRefs(pack.value_, refs);
  for (auto r : refs) {
    if (r >= pack.tensors_.size())
      throw ValuePackError(path + ": value refers to a missing tensor");
  }
  return pack;
}

nlohmann::json ValuePack::structure() const {
  // Replace each {"tensor": i} with its dtype and shape, recursively.
  std::function<nlohmann::json(const nlohmann::json&)> walk = [&](const nlohmann::json& v) {
    if (v.is_object() && v.contains("tensor")) {
      const auto& t = tensors_.at(v["tensor"].get<std::size_t>());
      return nlohmann::json{{"tensor", {{"dtype", toString(t.dtype())}, {"shape", t.shape()}}}};
    }
    if (v.is_object()) {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [k, child] : v.items()) out[k] = walk(child);
      return out;
    }
    if (v.is_array()) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& child : v) out.push_back(walk(child));
      return out;
    }
    return v;
  };
  return walk(value_);
}

}  // namespace crucible
