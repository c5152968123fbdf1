#include "core/tcl/types.h"

#include <algorithm>

namespace crucible::tcl {

bool isFloat(DType t) {
  return t == DType::FP16 || t == DType::BF16 || t == DType::FP32 || t == DType::FP64;
}
bool isInt(DType t) {
  return !isFloat(t) && t != DType::I1;
}
bool isSigned(DType t) {
  return t != DType::U32 && t != DType::U64 && t != DType::I1;
}

int bitWidth(DType t) {
  switch (t) {
    case DType::I1:
      return 1;
    case DType::I8:
      return 8;
    case DType::I16:
    case DType::FP16:
    case DType::BF16:
      return 16;
    case DType::I32:
    case DType::U32:
    case DType::FP32:
      return 32;
    default:
      return 64;
  }
}

std::string dtypeName(DType t) {
  switch (t) {
    case DType::I1:
      return "i1";
    case DType::I8:
      return "i8";
    case DType::I16:
      return "i16";
    case DType::I32:
      return "i32";
    case DType::I64:
      return "i64";
    case DType::U32:
      return "u32";
    case DType::U64:
      return "u64";
    case DType::FP16:
      return "fp16";
    case DType::BF16:
      return "bf16";
    case DType::FP32:
      return "fp32";
    case DType::FP64:
      return "fp64";
  }
  return "?";
}

bool dtypeFromName(const std::string& n, DType& out) {
  static const std::pair<const char*, DType> names[] = {
      {"i1", DType::I1},         {"int1", DType::I1},      {"bool", DType::I1},
      {"i8", DType::I8},         {"int8", DType::I8},      {"i16", DType::I16},
      {"int16", DType::I16},     {"i32", DType::I32},      {"int32", DType::I32},
      {"i64", DType::I64},       {"int64", DType::I64},    {"u32", DType::U32},
      {"uint32", DType::U32},    {"u64", DType::U64},      {"uint64", DType::U64},
      {"fp16", DType::FP16},     {"float16", DType::FP16}, {"bf16", DType::BF16},
      {"bfloat16", DType::BF16}, {"fp32", DType::FP32},    {"float32", DType::FP32},
      {"fp64", DType::FP64},     {"float64", DType::FP64}};
  for (const auto& [name, t] : names)
    if (n == name) {
      out = t;
      return true;
    }
  return false;
}

std::string computeCType(DType t) {
  switch (t) {
    case DType::I1:
      return "int";
    case DType::I8:
      return "char";
    case DType::I16:
      return "short";
    case DType::I32:
      return "int";
    case DType::I64:
      return "long";
    case DType::U32:
      return "uint";
    case DType::U64:
      return "ulong";
    case DType::FP16:
    case DType::BF16:
    case DType::FP32:
      return "float";
    case DType::FP64:
      return "double";
  }
  return "int";
}

std::string storageCType(DType t) {
  if (t == DType::I1) return "uchar";
  if (t == DType::FP16 || t == DType::BF16) return "ushort";
  return computeCType(t);
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string shapeString(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string Type::str() const {
  std::string e = pointer ? "pointer<" + dtypeName(dtype) + ">" : dtypeName(dtype);
  return shape.empty() ? e : "<" + shapeString(shape) + ", " + e + ">";
}

static int kindRank(DType t) {
  return t == DType::I1 ? 0 : (isFloat(t) ? 2 : 1);
}

DType promote(DType a, DType b, const std::string& op) {
  bool div = op == "/";
  bool mod = op == "%";
  if (div) {
    // int/int -> fp32; fp16/bf16 in fp32; float/float -> the wider.
    if (!isFloat(a) && !isFloat(b)) return DType::FP32;
    if (a == DType::FP64 || b == DType::FP64) return DType::FP64;
    return DType::FP32;
  }
  if ((op == "//" || mod || op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>") &&
      !isFloat(a) && !isFloat(b) && a != DType::I1 && b != DType::I1 &&
      isSigned(a) != isSigned(b) && (op == "//" || mod))
    throw std::invalid_argument("cannot use " + op + " on " + dtypeName(a) + " and " +
                                dtypeName(b) + " (mixed signedness)");
  if (a == b) {
    if (mod && (a == DType::FP16 || a == DType::BF16)) return DType::FP32;
    return a;
  }
  int ka = kindRank(a), kb = kindRank(b);
  if (ka != kb) {
    DType hi = ka > kb ? a : b;
    if (hi == DType::BF16) return DType::FP32;
    if (mod && (hi == DType::FP16)) return DType::FP32;
    return hi;
  }
  if (ka == 2) {
    if (a == DType::FP64 || b == DType::FP64) return DType::FP64;
    if (a == DType::FP32 || b == DType::FP32) return DType::FP32;
    return mod ? DType::FP32 : DType::FP16;  // fp16 with bf16
  }
  // Both ints: wider wins; same width, different signedness -> unsigned.
  int wa = bitWidth(a), wb = bitWidth(b);
  if (wa != wb) return wa > wb ? a : b;
  return isSigned(a) ? b : a;
}

Shape broadcastShapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument("cannot broadcast shapes " + shapeString(a) + " and " +
                                  shapeString(b));
    r[i] = da == 1 ? db : da;
  }
  return r;
}

}  // namespace crucible::tcl
