#pragma once
// Reader for value packs (.ctp): the worker's tensors on disk (docs/WORKER_PROTOCOL.md). The
// judge reads candidate and reference outputs here, outside any process that ran user code.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/file_bytes.h"

namespace crucible {

enum class DType { Float64, Float32, Float16, BFloat16, Int64, Int32, Int16, Int8, UInt8, Bool };

std::optional<DType> dtypeFromString(std::string_view name);
std::string_view toString(DType dtype);
std::size_t elementSize(DType dtype);
bool isFloating(DType dtype);
/// The poison bit pattern the worker fills uninitialised allocations with (nullopt for bool).
std::optional<std::uint64_t> poisonBits(DType dtype);

class ValuePackError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One tensor inside a pack: metadata and a view of its bytes.
class TensorData {
 public:
  TensorData(DType dtype, std::vector<std::int64_t> shape, const std::byte* data);

  DType dtype() const { return dtype_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::size_t numel() const { return numel_; }
  /// Element i converted to double (half and bfloat16 widened exactly).
  double at(std::size_t i) const;
  /// The raw bits of element i, zero-extended.
  std::uint64_t bitsAt(std::size_t i) const;
  std::string shapeText() const;

  // Bulk access for passes over millions of elements: one dtype switch per range, not per
  // element.
  /// Elements [first, first + count) converted to double into out[0, count), as at() does.
  void toDoubles(std::size_t first, std::size_t count, double* out) const;
  /// How many of elements [first, first + count) have exactly these bits (as bitsAt gives).
  std::uint64_t countBits(std::size_t first, std::size_t count, std::uint64_t bits) const;
  /// The tensor's bytes (numel() * its element size).
  std::span<const std::byte> bytes() const { return {data_, numel_ * elementSize_}; }

 private:
  DType dtype_;
  std::vector<std::int64_t> shape_;
  const std::byte* data_;
  std::size_t numel_;
  std::size_t elementSize_;
};

/// A loaded pack: the value's structure (JSON) and its tensors in depth-first order. Move-only:
/// the tensors point into the pack's own bytes.
class ValuePack {
 public:
  ValuePack(ValuePack&&) noexcept = default;
  ValuePack& operator=(ValuePack&&) noexcept = default;
  ValuePack(const ValuePack&) = delete;
  ValuePack& operator=(const ValuePack&) = delete;

  /// Loads and validates a pack; throws ValuePackError naming the file and the problem.
  static ValuePack load(const std::string& path);
  /// Parses a pack from its bytes; `name` is used in error messages.
  static ValuePack parse(std::string_view bytes, const std::string& name);
  /// The same, keeping the file's bytes instead of copying them.
  static ValuePack parse(FileBytes file, const std::string& name);

  const nlohmann::json& value() const { return value_; }
  const std::vector<TensorData>& tensors() const { return tensors_; }
  /// The value's shape with tensors replaced by dtype+shape: equal for comparable packs.
  nlohmann::json structure() const;

 private:
  ValuePack() = default;

  nlohmann::json value_;
  FileBytes file_;  // the whole file, header included; tensors point past the header
  std::vector<TensorData> tensors_;
};

}  // namespace crucible
