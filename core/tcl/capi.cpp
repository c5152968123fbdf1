// The extern "C" interface (tcl.h): never throws, never aborts.
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "core/tcl/frontend.h"
#include "core/tcl/runtime.h"
#include "core/tcl/tcl.h"

struct TclKernel {
  crucible::tcl::CompiledSource compiled;
  crucible::tcl::KernelHandle* handle = nullptr;
  std::string lineMapJson;
};

namespace {

void setError(char* error, size_t size, const std::string& msg) {
  if (!error || size == 0) return;
  std::strncpy(error, msg.c_str(), size - 1);
  error[size - 1] = '\0';
}

}  // namespace

extern "C" {

TclKernel* tcl_compile(const char* spec_json, char* error, size_t error_size) {
  try {
    auto spec = nlohmann::json::parse(spec_json);
    auto k = std::make_unique<TclKernel>();
    k->compiled = crucible::tcl::compileSpec(spec);
    k->lineMapJson = nlohmann::json(k->compiled.lineMap).dump();
    k->handle = crucible::tcl::Runtime::get().kernel(k->compiled.source, k->compiled.kernelName);
    return k.release();
  } catch (const crucible::tcl::CompileError& e) {
    setError(error, error_size, "line " + std::to_string(e.line) + ": " + e.what());
  } catch (const std::exception& e) {
    setError(error, error_size, e.what());
  } catch (...) {
    setError(error, error_size, "unknown error");
  }
  return nullptr;
}

const char* tcl_kernel_source(const TclKernel* kernel) {
  return kernel ? kernel->compiled.source.c_str() : "";
}

const char* tcl_kernel_line_map(const TclKernel* kernel) {
  return kernel ? kernel->lineMapJson.c_str() : "[]";
}

int tcl_kernel_num_params(const TclKernel* kernel) {
  return kernel ? static_cast<int>(kernel->compiled.params.size()) : -1;
}

int tcl_launch(TclKernel* kernel, const uint64_t grid[3], const TclArg* args, size_t nargs,
               char* error, size_t error_size) {
  try {
    if (!kernel) throw std::runtime_error("no kernel");
    int64_t oob[5] = {0, 0, 0, 0, 0};
    crucible::tcl::Runtime::get().launch(kernel->handle, kernel->compiled.params, grid, args, nargs,
                                         kernel->compiled.checked ? oob : nullptr);
    if (oob[0] == 0) return 0;
    static const char* kinds[] = {"load", "store", "atomic"};
    nlohmann::json report = {{"line", oob[1]},
                             {"param", oob[2]},
                             {"byte_offset", oob[3]},
                             {"access", kinds[oob[4] >= 0 && oob[4] < 3 ? oob[4] : 0]}};
    setError(error, error_size, report.dump());
    return 2;
  } catch (const std::exception& e) {
    setError(error, error_size, e.what());
  } catch (...) {
    setError(error, error_size, "unknown error");
  }
  return 1;
}

void tcl_free(TclKernel* kernel) {
  delete kernel;
}

}  // extern "C"
