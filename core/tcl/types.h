#pragma once
// Triton's scalar types and shapes for the subset Crucible compiles, with its promotion rules
// (research notes §1.5). fp16/bf16 are storage types: values are computed in fp32 and rounded
// back to the storage type after every operation.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace crucible::tcl {

enum class DType { I1, I8, I16, I32, I64, U32, U64, FP16, BF16, FP32, FP64 };

bool isFloat(DType t);
bool isInt(DType t);  // I1 excluded
bool isSigned(DType t);
int bitWidth(DType t);
std::string dtypeName(DType t);                           // Triton's spelling: "fp32", "i32", ...
bool dtypeFromName(const std::string& name, DType& out);  // "fp32", "float32", "int32", ...
/// The OpenCL C type a value of this dtype is computed in (fp16/bf16 -> float, i1 -> int).
std::string computeCType(DType t);
/// The OpenCL C element type in memory (fp16/bf16 -> ushort, i1 -> uchar).
std::string storageCType(DType t);

using Shape = std::vector<int64_t>;
int64_t numel(const Shape& s);
std::string shapeString(const Shape& s);

/// A value's type: a (block of) scalars or a (block of) pointers to `elem`.
struct Type {
  DType dtype = DType::I32;  // element type; for pointers, the pointee
  bool pointer = false;
  Shape shape;  // empty = scalar
  bool operator==(const Type& o) const {
    return dtype == o.dtype && pointer == o.pointer && shape == o.shape;
  }
  std::string str() const;
};

/// An error in the user's kernel (or an unsupported construct) at a line of its source file.
struct CompileError : std::runtime_error {
  int line;
  CompileError(int line_, const std::string& msg) : std::runtime_error(msg), line(line_) {}
};

/// Triton's result type of a binary arithmetic operation on two tensors (neither a constexpr).
/// `op` is the Python operator spelling ("+", "/", "%", "//", ...). Throws std::invalid_argument.
DType promote(DType a, DType b, const std::string& op);

/// Numpy-style broadcast of two shapes; throws std::invalid_argument if incompatible.
Shape broadcastShapes(const Shape& a, const Shape& b);

}  // namespace crucible::tcl
