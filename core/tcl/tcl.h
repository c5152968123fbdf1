#pragma once
// The C interface of Crucible's Triton-to-OpenCL compiler and runtime (docs/TCL.md). The Python
// `triton` shim (core/worker/triton_shim) calls it through ctypes; C++ callers may use it too.
// Nothing here throws or aborts: failures come back as messages ("line 12: tl.histogram is not
// supported by the opencl backend yet").

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TclKernel TclKernel;

/// Argument kinds, in the order of the kernel's runtime (non-constexpr) parameters.
enum TclArgKind {
  TCL_ARG_PTR = 0,   ///< a tensor: storage base, storage bytes, byte offset of data_ptr
  TCL_ARG_I32 = 1,   ///< i32 scalar in `i`
  TCL_ARG_I64 = 2,   ///< i64 scalar in `i`
  TCL_ARG_FP32 = 3,  ///< fp32 scalar in `f`
  TCL_ARG_I1 = 4,    ///< bool scalar in `i`
};

typedef struct TclArg {
  int32_t kind;
  int32_t reserved;
  uint64_t base;    ///< TCL_ARG_PTR: start of the tensor's storage
  uint64_t nbytes;  ///< TCL_ARG_PTR: bytes of the storage from `base`
  uint64_t offset;  ///< TCL_ARG_PTR: data_ptr - base
  int64_t i;
  double f;
} TclArg;

/// Compiles a specialised kernel (the JSON of docs/TCL.md: functions' ASTs, globals, argument
/// specialisation). Returns NULL and writes a message into `error` on failure.
TclKernel* tcl_compile(const char* spec_json, char* error, size_t error_size);

/// The generated OpenCL C source (valid until tcl_free).
const char* tcl_kernel_source(const TclKernel* kernel);

/// For each line of tcl_kernel_source's text, the Python line (in the kernel's file) it was
/// generated for, 0 for none (the prelude, helpers, parameter setup): a JSON array of integers,
/// valid until tcl_free.
const char* tcl_kernel_line_map(const TclKernel* kernel);

/// Number of runtime parameters tcl_launch expects.
int tcl_kernel_num_params(const TclKernel* kernel);

/// Runs grid[0]*grid[1]*grid[2] programs on the tensors' memory (no copies); returns 0 on
/// success, 1 with a message in `error` on failure, and, for a kernel compiled bounds-checked
/// (spec "checked": true), 2 when an access fell outside its pointer argument's storage:
/// `error` then holds the first such access as JSON {"line", "param" (index of the runtime
/// parameter, -1 if unknown), "byte_offset" (from the storage start), "access" ("load",
/// "store", "atomic")}; that access and later ones were skipped. Synchronous.
int tcl_launch(TclKernel* kernel, const uint64_t grid[3], const TclArg* args, size_t nargs,
               char* error, size_t error_size);

void tcl_free(TclKernel* kernel);

#ifdef __cplusplus
}
#endif
