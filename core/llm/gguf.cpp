#include "core/llm/gguf.h"

#include <bit>
#include <cstring>

#include "core/llm/mapped_file.h"
#include "core/llm/model_error.h"

namespace crucible::llm {
namespace {

float halfToFloat(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    // Subnormal: value = mantissa * 2^-24, exact in float32.
    const float v = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float bf16ToFloat(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A cursor over the header that turns running off the end into a ModelError.
class Reader {
 public:
  Reader(const std::byte* data, std::size_t size, std::string where)
      : data_(data), size_(size), where_(std::move(where)) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    const T v = load<T>(data_ + pos_);
    pos_ += sizeof(T);
    return v;
  }
  std::string string() {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  nlohmann::json value(std::uint32_t type, int depth = 0) {
    switch (type) {
      case 0:
        return get<std::uint8_t>();
      case 1:
        return get<std::int8_t>();
      case 2:
        return get<std::uint16_t>();
      case 3:
        return get<std::int16_t>();
      case 4:
        return get<std::uint32_t>();
      case 5:
        return get<std::int32_t>();
      case 6:
        return get<float>();
      case 7:
        return get<std::uint8_t>() != 0;
      case 8:
        return string();
      case 9: {
        if (depth > 2) fail("arrays nested too deep");
        const auto inner = get<std::uint32_t>();
        const auto count = get<std::uint64_t>();
        if (count > size_) fail("array count " + std::to_string(count) + " exceeds the file");
        nlohmann::json a = nlohmann::json::array();
        for (std::uint64_t i = 0; i < count; ++i) a.push_back(value(inner, depth + 1));
        return a;
      }
      case 10:
        return get<std::uint64_t>();
      case 11:
        return get<std::int64_t>();
      case 12:
        return get<double>();
      default:
        fail("unknown metadata value type " + std::to_string(type));
    }
  }
  std::size_t position() const { return pos_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw ModelError(where_ + ": at byte " + std::to_string(pos_) + ": " + what);
  }

 private:
  void need(std::uint64_t n) const {
    if (n > size_ - pos_) fail("truncated header");
  }
  const std::byte* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  std::string where_;
};

// The legacy 32-element blocks (ggml-quants.c's dequantize_row_q4_0 ... q5_1): an f16 scale d
// (and an f16 minimum m for the _1 types), 16 bytes of low nibbles (element j in the low nibble
// of byte j, element j + 16 in the high one), and for Q5 a 32-bit mask of fifth bits.
void dequantizeQ4(const std::byte* block, float* out, bool withMin) {
  const float d = halfToFloat(load<std::uint16_t>(block));
  const float m = withMin ? halfToFloat(load<std::uint16_t>(block + 2)) : 0.0f;
  const float offset = withMin ? 0.0f : -8.0f;
  const auto* qs = reinterpret_cast<const std::uint8_t*>(block + (withMin ? 4 : 2));
  for (int j = 0; j < 16; ++j) {
    out[j] = d * (static_cast<float>(qs[j] & 0xF) + offset) + m;
    out[j + 16] = d * (static_cast<float>(qs[j] >> 4) + offset) + m;
  }
}

void dequantizeQ5(const std::byte* block, float* out, bool withMin) {
  const float d = halfToFloat(load<std::uint16_t>(block));
  const float m = withMin ? halfToFloat(load<std::uint16_t>(block + 2)) : 0.0f;
  const float offset = withMin ? 0.0f : -16.0f;
  const std::byte* rest = block + (withMin ? 4 : 2);
  const auto qh = load<std::uint32_t>(rest);
  const auto* qs = reinterpret_cast<const std::uint8_t*>(rest + 4);
  for (int j = 0; j < 16; ++j) {
    const unsigned high0 = ((qh >> j) << 4) & 0x10, high1 = (qh >> (j + 12)) & 0x10;
    out[j] = d * (static_cast<float>((qs[j] & 0xF) | high0) + offset) + m;
    out[j + 16] = d * (static_cast<float>((qs[j] >> 4) | high1) + offset) + m;
  }
}

void dequantizeQ8_0(const std::byte* block, float* out) {
  const float d = halfToFloat(load<std::uint16_t>(block));
  for (int i = 0; i < 32; ++i) out[i] = d * static_cast<float>(load<std::int8_t>(block + 2 + i));
}

// ggml's get_scale_min_k4: 6-bit scale and min number j of a Q4_K super-block.
void scaleMinK4(int j, const std::uint8_t* q, std::uint8_t& sc, std::uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

void dequantizeQ4_K(const std::byte* block, float* out) {
  const float d = halfToFloat(load<std::uint16_t>(block));
  const float dmin = halfToFloat(load<std::uint16_t>(block + 2));
  const auto* scales = reinterpret_cast<const std::uint8_t*>(block + 4);
  const auto* q = reinterpret_cast<const std::uint8_t*>(block + 16);
  for (int j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
    std::uint8_t sc, m;
    scaleMinK4(is, scales, sc, m);
    const float d1 = d * sc, m1 = dmin * m;
    scaleMinK4(is + 1, scales, sc, m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) *out++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) *out++ = d2 * static_cast<float>(q[l] >> 4) - m2;
  }
}

void dequantizeQ6_K(const std::byte* block, float* out) {
  const auto* ql = reinterpret_cast<const std::uint8_t*>(block);
  const auto* qh = ql + 128;
  const auto* sc = reinterpret_cast<const std::int8_t*>(block + 192);
  const float d = halfToFloat(load<std::uint16_t>(block + 208));
  for (int n = 0; n < 256; n += 128, out += 128, ql += 64, qh += 32, sc += 8) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = static_cast<int>((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = static_cast<int>((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = static_cast<int>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = static_cast<int>((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      out[l] = d * sc[is] * q1;
      out[l + 32] = d * sc[is + 2] * q2;
      out[l + 64] = d * sc[is + 4] * q3;
      out[l + 96] = d * sc[is + 6] * q4;
    }
  }
}

}  // namespace

std::int64_t GgufTensor::elements() const {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

namespace {
struct TypeInfo {
  GgmlType type;
  const char* name;
  std::size_t perBlock, blockBytes;
};
// ggml's type traits for the types this reader decodes (ggml.c's type_traits table).
constexpr TypeInfo kTypes[] = {
    {GgmlType::F32, "F32", 1, 4},       {GgmlType::F16, "F16", 1, 2},
    {GgmlType::BF16, "BF16", 1, 2},     {GgmlType::Q4_0, "Q4_0", 32, 18},
    {GgmlType::Q4_1, "Q4_1", 32, 20},   {GgmlType::Q5_0, "Q5_0", 32, 22},
    {GgmlType::Q5_1, "Q5_1", 32, 24},   {GgmlType::Q8_0, "Q8_0", 32, 34},
    {GgmlType::Q4_K, "Q4_K", 256, 144}, {GgmlType::Q6_K, "Q6_K", 256, 210},
};
const TypeInfo* typeInfo(GgmlType type) {
  for (const TypeInfo& t : kTypes)
    if (t.type == type) return &t;
  return nullptr;
}
}  // namespace

std::pair<std::size_t, std::size_t> ggmlBlock(GgmlType type) {
  const TypeInfo* t = typeInfo(type);
  if (!t) return {0, 0};
  return {t->perBlock, t->blockBytes};
}

std::string ggmlTypeName(GgmlType type) {
  const TypeInfo* t = typeInfo(type);
  return t ? t->name : "ggml type " + std::to_string(static_cast<std::uint32_t>(type));
}

GgufFile::GgufFile(const std::filesystem::path& path) : file_(std::make_unique<MappedFile>(path)) {
  Reader r(file_->data(), file_->size(), path.string());
  if (r.get<std::uint32_t>() != 0x46554747u) r.fail("not a GGUF file (bad magic)");
  version_ = r.get<std::uint32_t>();
  if (version_ < 2 || version_ > 3)
    r.fail("GGUF version " + std::to_string(version_) + " (need 2 or 3)");
  const auto tensorCount = r.get<std::uint64_t>();
  const auto kvCount = r.get<std::uint64_t>();
  if (tensorCount > file_->size() || kvCount > file_->size()) r.fail("implausible counts");
  for (std::uint64_t i = 0; i < kvCount; ++i) {
    std::string key = r.string();
    metadata_[key] = r.value(r.get<std::uint32_t>());
  }
  struct Info {
    GgufTensor tensor;
    std::uint64_t offset;
  };
  std::vector<Info> infos;
  for (std::uint64_t i = 0; i < tensorCount; ++i) {
    Info info;
    info.tensor.name = r.string();
    const auto nDims = r.get<std::uint32_t>();
    if (nDims > 4)
      r.fail("tensor '" + info.tensor.name + "' has " + std::to_string(nDims) + " dims");
    for (std::uint32_t d = 0; d < nDims; ++d)
      info.tensor.dims.push_back(static_cast<std::int64_t>(r.get<std::uint64_t>()));
    info.tensor.type = static_cast<GgmlType>(r.get<std::uint32_t>());
    info.offset = r.get<std::uint64_t>();
    infos.push_back(std::move(info));
  }
  const std::uint64_t alignment = metadata_.value("general.alignment", std::uint64_t{32});
  if (alignment == 0 || (alignment & (alignment - 1)))
    r.fail("general.alignment is not a power of two");
  const std::uint64_t dataStart = (r.position() + alignment - 1) / alignment * alignment;
  for (Info& info : infos) {
    GgufTensor& t = info.tensor;
    const auto [perBlock, blockBytes] = ggmlBlock(t.type);
    const std::string where = path.string() + ": tensor '" + t.name + "'";
    if (perBlock == 0) {
      t.bytes = 0;  // listed, but its type cannot be decoded: an error only when it is used
    } else {
      if (t.elements() % static_cast<std::int64_t>(perBlock) != 0)
        throw ModelError(where + ": element count not a multiple of the block size");
      t.bytes = static_cast<std::size_t>(t.elements()) / perBlock * blockBytes;
      if (dataStart + info.offset + t.bytes > file_->size())
        throw ModelError(where + ": data runs past the end of the file");
      t.data = file_->data() + dataStart + info.offset;
    }
    tensors_.emplace(t.name, std::move(t));
  }
}

GgufFile::~GgufFile() = default;

std::vector<float> dequantize(const GgufTensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.elements()));
  dequantizeInto(t, out.data());
  return out;
}

void dequantizeInto(const GgufTensor& t, float* out) {
  const auto [perBlock, blockBytes] = ggmlBlock(t.type);
  if (perBlock == 0 || !t.data)
    throw ModelError("tensor '" + t.name + "': " + ggmlTypeName(t.type) + " is not supported");
  const std::size_t blocks = static_cast<std::size_t>(t.elements()) / perBlock;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::byte* block = t.data + b * blockBytes;
    float* dst = out + b * perBlock;
    switch (t.type) {
      case GgmlType::F32:
        *dst = load<float>(block);
        break;
      case GgmlType::F16:
        *dst = halfToFloat(load<std::uint16_t>(block));
        break;
      case GgmlType::BF16:
        *dst = bf16ToFloat(load<std::uint16_t>(block));
        break;
      case GgmlType::Q4_0:
      case GgmlType::Q4_1:
        dequantizeQ4(block, dst, t.type == GgmlType::Q4_1);
        break;
      case GgmlType::Q5_0:
      case GgmlType::Q5_1:
        dequantizeQ5(block, dst, t.type == GgmlType::Q5_1);
        break;
      case GgmlType::Q8_0:
        dequantizeQ8_0(block, dst);
        break;
      case GgmlType::Q4_K:
        dequantizeQ4_K(block, dst);
        break;
      case GgmlType::Q6_K:
        dequantizeQ6_K(block, dst);
        break;
      default:
        break;
    }
  }
}

}  // namespace crucible::llm
