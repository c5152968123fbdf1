#pragma once
// The OpenCL runtime: one context and queue on the chosen device, programs built once and
// cached in memory and on disk (keyed by the SHA-256 of source + build options + device), and
// launches on host memory through CL_MEM_USE_HOST_PTR buffers (no copies on CPU devices).

#include <cstdint>
#include <string>
#include <vector>

#include "core/tcl/codegen.h"
#include "core/tcl/tcl.h"

namespace crucible::tcl {

struct KernelHandle;  // opaque: cl_program + cl_kernel

class Runtime {
 public:
  /// The process-wide runtime; initialised on first use. Throws std::runtime_error.
  static Runtime& get();

  /// Builds (or fetches from the caches) the program for `source` and returns its kernel.
  KernelHandle* kernel(const std::string& source, const std::string& name);
  /// Runs `k` over the grid (local size 1); `args` are in the order of `params`.
  /// `oob`: for a bounds-checked kernel, 5 longs that receive its report (set flag, line,
  /// parameter index, byte offset from the storage, kind); null for an unchecked one.
  void launch(KernelHandle* k, const std::vector<Param>& params, const uint64_t grid[3],
              const TclArg* args, size_t nargs, int64_t* oob = nullptr);

  const std::string& deviceName() const { return deviceName_; }
  /// Builds from source since this process started (tests use it to prove the caches work).
  int sourceBuilds() const { return sourceBuilds_; }

 private:
  Runtime();
  struct Impl;
  Impl* impl_;
  std::string deviceName_;
  int sourceBuilds_ = 0;
};

/// The on-disk cache folder: $CRUCIBLE_TCL_CACHE_DIR, else $XDG_CACHE_HOME/crucible/tcl, else
/// ~/.cache/crucible/tcl. Empty when none can be determined (then only the memory cache). On
/// PoCL its `pocl/` folder holds PoCL's own program cache (POCL_CACHE_DIR, unless already set).
std::string cacheDir();

}  // namespace crucible::tcl
