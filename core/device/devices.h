#pragma once
// What this machine can run candidates on, for backend pickers: the OpenCL devices (asked of the
// ICD loader directly, no clinfo) and the NVIDIA GPUs. Both lookups are cheap but may take a
// moment when a platform initialises (PoCL), so callers run them off the UI thread.

#include <string>
#include <vector>

namespace crucible {

struct ComputeDevice {
  std::string backend;   // "opencl" | "cuda"
  std::string name;      // the device's own name ("cpu-haswell-Intel(R) Xeon(R) ...")
  std::string platform;  // OpenCL platform ("Portable Computing Language"); "" for cuda
};

/// OpenCL devices of every platform the ICD loader (libOpenCL.so.1) knows; empty when there is
/// no loader or no platform. Loaded with dlopen, so Crucible runs without OpenCL installed.
std::vector<ComputeDevice> detectOpenClDevices();

/// NVIDIA GPUs the driver exposes (/proc/driver/nvidia/gpus), or one unnamed GPU when only the
/// device nodes are visible; empty without a GPU.
std::vector<ComputeDevice> detectCudaDevices();

}  // namespace crucible
