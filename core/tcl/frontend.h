#pragma once
// The front end: a typed, constexpr-folding abstract interpreter over the kernel's Python `ast`
// (as JSON, docs/TCL.md) that builds the block IR and drives the code generator.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tcl/codegen.h"

namespace crucible::tcl {

struct CompiledSource {
  std::string kernelName;  // the OpenCL kernel's name
  std::string source;      // OpenCL C
  std::vector<Param> params;
  /// Bounds-checked build (spec "checked": true): each pointer parameter also takes its
  /// storage's byte size, and a trailing `long[5]` buffer receives the first out-of-bounds
  /// access (set flag, kernel line, parameter index, byte offset from the storage, kind).
  bool checked = false;
  /// For each line of `source`, the kernel's Python line it was generated for (0: none).
  std::vector<int> lineMap;
};

/// Compiles a specialisation. Throws CompileError (with the kernel line) for errors in the
/// kernel and for constructs the backend does not support yet.
CompiledSource compileSpec(const nlohmann::json& spec);

}  // namespace crucible::tcl
