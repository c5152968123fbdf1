#include "core/tcl/runtime.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "core/util/sha256.h"

namespace crucible::tcl {

namespace fs = std::filesystem;

namespace {

const char* kBuildOptions = "-cl-std=CL1.2";  // never fast-math: NaN/inf semantics matter

void check(cl_int err, const char* what) {
  if (err != CL_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed (OpenCL error " + std::to_string(err) +
                             ")");
}

std::string deviceString(cl_device_id d, cl_device_info info) {
  size_t n = 0;
  clGetDeviceInfo(d, info, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetDeviceInfo(d, info, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

struct KernelHandle {
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
};

struct Runtime::Impl {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string deviceKey;
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<KernelHandle>> kernels;  // key -> kernel
};

std::string cacheDir() {
  if (const char* d = std::getenv("CRUCIBLE_TCL_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/crucible/tcl";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/crucible/tcl";
  return {};
}

Runtime& Runtime::get() {
  static Runtime rt;
  return rt;
}

Runtime::Runtime() : impl_(new Impl) {
  // PoCL settings, read when it initialises (a user's own values win). PoCL compiles a
  // work-group function specialised to the launch's local size at the first launch, and a
  // generic one for the program binary this runtime keeps on disk: two LLVM code generations
  // per kernel, and a warm process compiling again. Without specialisation the binary's generic
  // function serves every launch (as fast for our one-work-item groups): one code generation,
  // and none after a disk-cache hit. PoCL's own program cache goes inside ours.
  // NOLINTBEGIN(concurrency-mt-unsafe)
  setenv("POCL_WORK_GROUP_SPECIALIZATION", "0", 0);
  if (std::string dir = cacheDir(); !dir.empty())
    setenv("POCL_CACHE_DIR", (dir + "/pocl").c_str(), 0);
  // NOLINTEND(concurrency-mt-unsafe)
  cl_uint np = 0;
  check(clGetPlatformIDs(0, nullptr, &np), "clGetPlatformIDs");
  if (np == 0) throw std::runtime_error("no OpenCL platform (install pocl-opencl-icd)");
  std::vector<cl_platform_id> platforms(np);
  clGetPlatformIDs(np, platforms.data(), nullptr);
  const char* want = std::getenv("CRUCIBLE_OPENCL_DEVICE");  // substring of the device name
  for (auto p : platforms) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> devs(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr);
    for (auto d : devs) {
      std::string name = deviceString(d, CL_DEVICE_NAME);
      if (want && *want && name.find(want) == std::string::npos) continue;
      impl_->platform = p;
      impl_->device = d;
      deviceName_ = name;
      break;
    }
    if (impl_->device) break;
  }
  if (!impl_->device) throw std::runtime_error("no OpenCL device found");
  impl_->deviceKey = deviceName_ + "|" + deviceString(impl_->device, CL_DEVICE_VERSION) + "|" +
                     deviceString(impl_->device, CL_DRIVER_VERSION);
  cl_int err = 0;
  impl_->context = clCreateContext(nullptr, 1, &impl_->device, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  impl_->queue = clCreateCommandQueue(impl_->context, impl_->device, 0, &err);
  check(err, "clCreateCommandQueue");
}

KernelHandle* Runtime::kernel(const std::string& source, const std::string& name) {
  std::lock_guard lock(impl_->mutex);
  std::string key = util::sha256Hex(source + '\0' + kBuildOptions + '\0' + impl_->deviceKey);
  if (auto it = impl_->kernels.find(key); it != impl_->kernels.end()) return it->second.get();

  auto h = std::make_unique<KernelHandle>();
  cl_int err = 0;
  std::string dir = cacheDir();
  fs::path bin = dir.empty() ? fs::path() : fs::path(dir) / (key + ".bin");
  // Disk cache: a binary from an earlier process.
  if (!bin.empty() && fs::exists(bin)) {
    std::ifstream in(bin, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    const unsigned char* data = reinterpret_cast<const unsigned char*>(bytes.data());
    size_t size = bytes.size();
    cl_int status = 0;
    cl_program p =
        clCreateProgramWithBinary(impl_->context, 1, &impl_->device, &size, &data, &status, &err);
    if (err == CL_SUCCESS && status == CL_SUCCESS &&
        clBuildProgram(p, 1, &impl_->device, kBuildOptions, nullptr, nullptr) == CL_SUCCESS) {
      h->program = p;
    } else if (p) {
      clReleaseProgram(p);
    }
  }
  if (!h->program) {
    const char* src = source.c_str();
    h->program = clCreateProgramWithSource(impl_->context, 1, &src, nullptr, &err);
    check(err, "clCreateProgramWithSource");
    ++sourceBuilds_;
    if (clBuildProgram(h->program, 1, &impl_->device, kBuildOptions, nullptr, nullptr) !=
        CL_SUCCESS) {
      size_t n = 0;
      clGetProgramBuildInfo(h->program, impl_->device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      clGetProgramBuildInfo(h->program, impl_->device, CL_PROGRAM_BUILD_LOG, n, log.data(),
                            nullptr);
      clReleaseProgram(h->program);
      throw std::runtime_error("internal error: the generated OpenCL C did not build:\n" + log);
    }
    if (!bin.empty()) {  // best effort: write to a temporary, then rename
      size_t size = 0;
      clGetProgramInfo(h->program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
      std::string bytes(size, '\0');
      unsigned char* ptr = reinterpret_cast<unsigned char*>(bytes.data());
      if (size && clGetProgramInfo(h->program, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) ==
                      CL_SUCCESS) {
        std::error_code ec;
        fs::create_directories(dir, ec);
        fs::path tmp = bin;
        tmp += ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(h.get()));
        {
          std::ofstream out(tmp, std::ios::binary);
          out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        }
        fs::rename(tmp, bin, ec);
        if (ec) fs::remove(tmp, ec);
      }
    }
  }
  h->kernel = clCreateKernel(h->program, name.c_str(), &err);
  check(err, "clCreateKernel");
  KernelHandle* raw = h.get();
  impl_->kernels.emplace(key, std::move(h));
  return raw;
}

void Runtime::launch(KernelHandle* k, const std::vector<Param>& params, const uint64_t grid[3],
                     const TclArg* args, size_t nargs, int64_t* oob) {
  if (nargs != params.size())
    throw std::runtime_error("the kernel takes " + std::to_string(params.size()) +
                             " runtime arguments, got " + std::to_string(nargs));
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return;  // Triton launches nothing
  std::lock_guard lock(impl_->mutex);
  // One buffer per distinct storage, so aliasing arguments share memory.
  std::map<std::pair<uint64_t, uint64_t>, cl_mem> buffers;
  std::vector<std::unique_ptr<char[]>> dummies;
  cl_mem report = nullptr;  // bounds-checked mode's out-of-bounds report
  auto release = [&] {
    for (auto& [_, m] : buffers) clReleaseMemObject(m);
    if (report) clReleaseMemObject(report);
  };
  try {
    cl_uint ai = 0;
    cl_int err0 = CL_SUCCESS;
    for (size_t i = 0; i < nargs; ++i) {
      const TclArg& a = args[i];
      const Param& p = params[i];
      int want = p.type.pointer                ? TCL_ARG_PTR
                 : p.type.dtype == DType::I32  ? TCL_ARG_I32
                 : p.type.dtype == DType::I64  ? TCL_ARG_I64
                 : p.type.dtype == DType::FP32 ? TCL_ARG_FP32
                                               : TCL_ARG_I1;
      if (a.kind != want)
        throw std::runtime_error("argument " + std::to_string(i) + " (" + p.name.substr(2) +
                                 ") has the wrong kind");
      cl_int err = CL_SUCCESS;
      if (a.kind == TCL_ARG_PTR) {
        auto bkey = std::make_pair(a.base, a.nbytes);
        cl_mem m;
        if (auto it = buffers.find(bkey); it != buffers.end()) {
          m = it->second;
        } else {
          void* host = reinterpret_cast<void*>(a.base);
          size_t size = a.nbytes;
          if (!host || size == 0) {
            dummies.emplace_back(new char[64]());
            host = dummies.back().get();
            size = 64;
          }
          m = clCreateBuffer(impl_->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, size, host,
                             &err);
          check(err, "clCreateBuffer");
          buffers[bkey] = m;
        }
        cl_ulong off = a.offset;
        check(clSetKernelArg(k->kernel, ai++, sizeof m, &m), "clSetKernelArg");
        check(clSetKernelArg(k->kernel, ai++, sizeof off, &off), "clSetKernelArg");
        if (oob) {
          cl_ulong n = a.nbytes;
          check(clSetKernelArg(k->kernel, ai++, sizeof n, &n), "clSetKernelArg");
        }
      } else if (a.kind == TCL_ARG_I32) {
        cl_int v = static_cast<cl_int>(a.i);
        check(clSetKernelArg(k->kernel, ai++, sizeof v, &v), "clSetKernelArg");
      } else if (a.kind == TCL_ARG_I64) {
        cl_long v = a.i;
        check(clSetKernelArg(k->kernel, ai++, sizeof v, &v), "clSetKernelArg");
      } else if (a.kind == TCL_ARG_FP32) {
        cl_float v = static_cast<cl_float>(a.f);
        check(clSetKernelArg(k->kernel, ai++, sizeof v, &v), "clSetKernelArg");
      } else {
        cl_uchar v = a.i != 0;
        check(clSetKernelArg(k->kernel, ai++, sizeof v, &v), "clSetKernelArg");
      }
    }
    if (oob) {
      for (int j = 0; j < 5; ++j) oob[j] = 0;
      report = clCreateBuffer(impl_->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              5 * sizeof(cl_long), oob, &err0);
      check(err0, "clCreateBuffer");
      check(clSetKernelArg(k->kernel, ai++, sizeof report, &report), "clSetKernelArg");
    }
    size_t global[3] = {grid[0], grid[1], grid[2]}, local[3] = {1, 1, 1};
    check(clEnqueueNDRangeKernel(impl_->queue, k->kernel, 3, nullptr, global, local, 0, nullptr,
                                 nullptr),
          "clEnqueueNDRangeKernel");
    check(clFinish(impl_->queue), "clFinish");
    if (oob)
      check(clEnqueueReadBuffer(impl_->queue, report, CL_TRUE, 0, 5 * sizeof(cl_long), oob, 0,
                                nullptr, nullptr),
            "clEnqueueReadBuffer");
  } catch (...) {
    release();
    throw;
  }
  release();
}

}  // namespace crucible::tcl
