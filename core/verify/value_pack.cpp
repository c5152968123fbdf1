#include "core/verify/value_pack.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

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

// Indexed by the enum's value: looked up for every tensor and every at().
constexpr bool tableInEnumOrder() {
  for (std::size_t i = 0; i < kDTypes.size(); ++i) {
    if (static_cast<std::size_t>(kDTypes[i].dtype) != i) return false;
  }
  return true;
}
static_assert(tableInEnumOrder());

const DTypeInfo& info(DType dtype) {
  const auto i = static_cast<std::size_t>(dtype);
  return i < kDTypes.size() ? kDTypes[i] : kDTypes[1];
}

constexpr std::string_view kMagic = "CRUCTP01";

double halfToDouble(std::uint16_t h) {
  const std::uint64_t sign = static_cast<std::uint64_t>(h >> 15) << 63;
  const int exponent = (h >> 10) & 0x1F;
  const std::uint64_t mantissa = h & 0x3FF;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in a double
    const double value = static_cast<double>(mantissa) * 0x1p-24;
    return h >> 15 ? -value : value;
  }
  if (exponent == 31) {
    const double value = mantissa == 0 ? std::numeric_limits<double>::infinity()
                                       : std::numeric_limits<double>::quiet_NaN();
    return h >> 15 ? -value : value;
  }
  // Normal: the same exponent and mantissa, re-biased and widened (exact).
  return std::bit_cast<double>(sign | static_cast<std::uint64_t>(exponent - 15 + 1023) << 52 |
                               mantissa << 42);
}

double bfloat16ToDouble(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

template <typename T>
T readAs(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T, typename Convert>
void convertRange(const std::byte* p, std::size_t count, double* out, Convert convert) {
  for (std::size_t i = 0; i < count; ++i) out[i] = convert(readAs<T>(p + i * sizeof(T)));
}

template <typename T>
void widenRange(const std::byte* p, std::size_t count, double* out) {
  convertRange<T>(p, count, out, [](T v) { return static_cast<double>(v); });
}

template <typename U>
std::uint64_t countEqual(const std::byte* p, std::size_t count, std::uint64_t bits) {
  if (bits > std::numeric_limits<U>::max()) return 0;
  const U want = static_cast<U>(bits);
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < count; ++i) n += readAs<U>(p + i * sizeof(U)) == want;
  return n;
}

// What a header may claim. The worker that writes packs runs user code, so a header is untrusted:
// every count is checked before it sizes or locates anything.
constexpr std::size_t kMaxRank = 64;   // far beyond any real tensor; bounds the shape vector
constexpr int kMaxHeaderDepth = 1000;  // the recursive walks below (and nlohmann's ==, dump)

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw ValuePackError(path + ": " + problem);
}

/// A JSON value as short text for an error message (a header may hold megabytes of anything).
std::string excerpt(const nlohmann::json& v) {
  std::string text = v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

/// A JSON integer >= 0; nullopt for negatives, fractions, strings, booleans and the rest.
std::optional<std::uint64_t> countIn(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return std::nullopt;
}

/// The shape of tensor entry `t`: at most kMaxRank dimensions, each a non-negative integer, whose
/// product (zeros aside) fits int64 and times the element size, `nbytes`, fits 64 bits.
std::vector<std::int64_t> checkedShape(const nlohmann::json& t, std::size_t elementBytes,
                                       std::uint64_t& nbytes, const std::string& where) {
  const auto it = t.find("shape");
  if (it == t.end() || !it->is_array()) fail(where, "shape is not a list");
  if (it->size() > kMaxRank) {
    fail(where, "rank " + std::to_string(it->size()) + " exceeds " + std::to_string(kMaxRank));
  }
  std::vector<std::int64_t> shape;
  shape.reserve(it->size());
  // Zero dimensions are skipped in the product so that every partial product of the others also
  // fits: an empty tensor may not claim [0, 2^40, 2^40] either.
  std::int64_t product = 1;
  bool empty = false;
  for (const auto& d : *it) {
    const auto n = countIn(d);
    if (!n || *n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(where, "dimension " + std::to_string(shape.size()) + " is " + excerpt(d) +
                      ", not a non-negative 64-bit integer");
    }
    const auto dim = static_cast<std::int64_t>(*n);
    if (dim == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(product, dim, &product)) {
      fail(where, "shape " + excerpt(*it) + " has more elements than 64 bits can count");
    }
    shape.push_back(dim);
  }
  const std::uint64_t numel = empty ? 0 : static_cast<std::uint64_t>(product);
  if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(elementBytes), &nbytes)) {
    fail(where, "shape " + excerpt(*it) + " has more bytes than 64 bits can count");
  }
  return shape;
}

/// Checks every {"tensor": i} in the value names one of `tensors` tensors.
void checkTensorRefs(const nlohmann::json& value, std::size_t tensors, const std::string& path) {
  if (value.is_object()) {
    if (const auto it = value.find("tensor"); it != value.end()) {
      const auto index = countIn(*it);
      if (!index || *index >= tensors) {
        fail(path, "value refers to tensor " + excerpt(*it) + " of " + std::to_string(tensors));
      }
      return;
    }
    for (const auto& [key, child] : value.items()) checkTensorRefs(child, tensors, path);
  } else if (value.is_array()) {
    for (const auto& child : value) checkTensorRefs(child, tensors, path);
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
    : dtype_(dtype),
      shape_(std::move(shape)),
      data_(data),
      numel_(1),
      elementSize_(elementSize(dtype)) {
  for (auto d : shape_) numel_ *= static_cast<std::size_t>(d);
}

double TensorData::at(std::size_t i) const {
  const std::byte* p = data_ + i * elementSize_;
  switch (dtype_) {
    case DType::Float64:
      return readAs<double>(p);
    case DType::Float32:
      return readAs<float>(p);
    case DType::Float16:
      return halfToDouble(readAs<std::uint16_t>(p));
    case DType::BFloat16:
      return bfloat16ToDouble(readAs<std::uint16_t>(p));
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
  const std::byte* p = data_ + i * elementSize_;
  switch (elementSize_) {
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

void TensorData::toDoubles(std::size_t first, std::size_t count, double* out) const {
  const std::byte* p = data_ + first * elementSize_;
  switch (dtype_) {
    case DType::Float64:
      return widenRange<double>(p, count, out);
    case DType::Float32:
      return widenRange<float>(p, count, out);
    case DType::Float16:
      return convertRange<std::uint16_t>(p, count, out, halfToDouble);
    case DType::BFloat16:
      return convertRange<std::uint16_t>(p, count, out, bfloat16ToDouble);
    case DType::Int64:
      return widenRange<std::int64_t>(p, count, out);
    case DType::Int32:
      return widenRange<std::int32_t>(p, count, out);
    case DType::Int16:
      return widenRange<std::int16_t>(p, count, out);
    case DType::Int8:
      return widenRange<std::int8_t>(p, count, out);
    case DType::UInt8:
      return widenRange<std::uint8_t>(p, count, out);
    case DType::Bool:
      return convertRange<std::uint8_t>(p, count, out,
                                        [](std::uint8_t v) { return v != 0 ? 1.0 : 0.0; });
  }
}

std::uint64_t TensorData::countBits(std::size_t first, std::size_t count,
                                    std::uint64_t bits) const {
  const std::byte* p = data_ + first * elementSize_;
  switch (elementSize_) {
    case 8:
      return countEqual<std::uint64_t>(p, count, bits);
    case 4:
      return countEqual<std::uint32_t>(p, count, bits);
    case 2:
      return countEqual<std::uint16_t>(p, count, bits);
    default:
      return countEqual<std::uint8_t>(p, count, bits);
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
  auto file = readFileBytes(path);
  if (!file) throw ValuePackError(path + ": cannot open");
  return parse(std::move(*file), path);
}

ValuePack ValuePack::parse(std::string_view bytes, const std::string& name) {
  FileBytes copy;
  copy.data = std::make_unique_for_overwrite<std::byte[]>(bytes.size());
  copy.size = bytes.size();
  std::memcpy(copy.data.get(), bytes.data(), bytes.size());
  return parse(std::move(copy), name);
}

ValuePack ValuePack::parse(FileBytes file, const std::string& path) {
  ValuePack pack;
  pack.file_ = std::move(file);
  const std::string_view raw = pack.file_.view();
  if (raw.size() < 16 || std::string_view(raw.data(), 8) != kMagic) {
    throw ValuePackError(path + ": not a value pack (bad magic)");
  }
  std::uint64_t headerLength = 0;
  std::memcpy(&headerLength, raw.data() + 8, 8);  // little-endian on every platform we build for
  if (headerLength > raw.size() - 16) throw ValuePackError(path + ": header runs past the file");
  nlohmann::json header;
  try {
    // Refused while parsing, before a deep value reaches any recursive walk.
    const auto depthLimit = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxHeaderDepth) {
        fail(path, "header nests deeper than " + std::to_string(kMaxHeaderDepth) + " levels");
      }
      return true;
    };
    header = nlohmann::json::parse(raw.begin() + 16, raw.begin() + 16 + headerLength, depthLimit);
  } catch (const nlohmann::json::exception& e) {
    throw ValuePackError(path + ": header is not JSON: " + e.what());
  }
  if (!header.is_object()) fail(path, "header is not a JSON object");
  const auto tensors = header.find("tensors");
  if (!header.contains("value") || tensors == header.end() || !tensors->is_array()) {
    fail(path, "header needs a \"value\" and a \"tensors\" list");
  }
  const std::size_t dataStart = 16 + headerLength;
  const std::byte* data = pack.file_.data.get() + dataStart;
  const std::uint64_t dataSize = raw.size() - dataStart;
  pack.value_ = std::move(header["value"]);

  pack.tensors_.reserve(tensors->size());
  for (const auto& t : *tensors) {
    const std::string where = path + ": tensor " + std::to_string(pack.tensors_.size());
    if (!t.is_object()) fail(where, "entry is not an object");
    const auto dtypeName = t.find("dtype");
    const auto dtype = dtypeName != t.end() && dtypeName->is_string()
                           ? dtypeFromString(dtypeName->get<std::string>())
                           : std::nullopt;
    if (!dtype) {
      fail(where, "unknown dtype " + (dtypeName == t.end() ? "(none)" : excerpt(*dtypeName)));
    }
    std::uint64_t expected = 0;
    auto shape = checkedShape(t, elementSize(*dtype), expected, where);
    const auto offset = countIn(t.value("offset", nlohmann::json()));
    const auto nbytes = countIn(t.value("nbytes", nlohmann::json()));
    if (!offset || !nbytes) fail(where, "offset and nbytes must be non-negative integers");
    if (*nbytes != expected) {
      fail(where, "nbytes " + std::to_string(*nbytes) + " does not match shape " +
                      excerpt(t["shape"]) + " of " + std::string(toString(*dtype)) + " (" +
                      std::to_string(expected) + " bytes)");
    }
    if (*offset > dataSize || *nbytes > dataSize - *offset) {
      fail(where, "bytes " + std::to_string(*offset) + " + " + std::to_string(*nbytes) +
                      " run past the end of the data (" + std::to_string(dataSize) + " bytes)");
    }
    pack.tensors_.emplace_back(*dtype, std::move(shape), data + *offset);
  }
  checkTensorRefs(pack.value_, pack.tensors_.size(), path);
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
