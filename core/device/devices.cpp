#include "core/device/devices.h"

#include <dlfcn.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

namespace crucible {

namespace fs = std::filesystem;

namespace {

// The few OpenCL entry points needed, declared here so core does not depend on OpenCL headers.
using ClInt = std::int32_t;
using ClUint = std::uint32_t;
using ClPlatform = void*;
using ClDevice = void*;
using GetPlatformIds = ClInt (*)(ClUint, ClPlatform*, ClUint*);
using GetPlatformInfo = ClInt (*)(ClPlatform, ClUint, std::size_t, void*, std::size_t*);
using GetDeviceIds = ClInt (*)(ClPlatform, std::uint64_t, ClUint, ClDevice*, ClUint*);
using GetDeviceInfo = ClInt (*)(ClDevice, ClUint, std::size_t, void*, std::size_t*);
constexpr ClUint kPlatformName = 0x0902;
constexpr ClUint kDeviceName = 0x102B;
constexpr std::uint64_t kDeviceTypeAll = 0xFFFFFFFF;

template <typename Handle, typename Getter>
std::string infoText(Getter get, Handle handle, ClUint what) {
  std::size_t size = 0;
  if (get(handle, what, 0, nullptr, &size) != 0 || size == 0) return {};
  std::string text(size, '\0');
  if (get(handle, what, size, text.data(), nullptr) != 0) return {};
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t");
  const auto last = text.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

}  // namespace

std::vector<ComputeDevice> detectOpenClDevices() {
  std::vector<ComputeDevice> devices;
  void* library = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return devices;
  auto platformIds = reinterpret_cast<GetPlatformIds>(dlsym(library, "clGetPlatformIDs"));
  auto platformInfo = reinterpret_cast<GetPlatformInfo>(dlsym(library, "clGetPlatformInfo"));
  auto deviceIds = reinterpret_cast<GetDeviceIds>(dlsym(library, "clGetDeviceIDs"));
  auto deviceInfo = reinterpret_cast<GetDeviceInfo>(dlsym(library, "clGetDeviceInfo"));
  ClUint platformCount = 0;
  if (platformIds && platformInfo && deviceIds && deviceInfo &&
      platformIds(0, nullptr, &platformCount) == 0 && platformCount > 0) {
    std::vector<ClPlatform> platforms(platformCount);
    platformIds(platformCount, platforms.data(), nullptr);
    for (ClPlatform platform : platforms) {
      ClUint count = 0;
      if (deviceIds(platform, kDeviceTypeAll, 0, nullptr, &count) != 0 || count == 0) continue;
      std::vector<ClDevice> ids(count);
      if (deviceIds(platform, kDeviceTypeAll, count, ids.data(), nullptr) != 0) continue;
      const std::string platformName = infoText(platformInfo, platform, kPlatformName);
      for (ClDevice device : ids) {
        devices.push_back({"opencl", infoText(deviceInfo, device, kDeviceName), platformName});
      }
    }
  }
  // The loader stays loaded: PoCL registers exit handlers that expect it.
  return devices;
}

std::vector<ComputeDevice> detectCudaDevices() {
  std::vector<ComputeDevice> devices;
  std::error_code ec;
  const fs::path gpus = "/proc/driver/nvidia/gpus";
  if (fs::is_directory(gpus, ec)) {
    for (const auto& entry : fs::directory_iterator(gpus, ec)) {
      std::ifstream info(entry.path() / "information");
      std::string line, name = "NVIDIA GPU " + entry.path().filename().string();
      while (std::getline(info, line)) {
        if (line.rfind("Model:", 0) == 0) name = trim(line.substr(6));
      }
      devices.push_back({"cuda", name, ""});
    }
  }
  if (devices.empty() && (fs::exists("/dev/nvidia0", ec) || fs::exists("/dev/nvidiactl", ec))) {
    devices.push_back({"cuda", "NVIDIA GPU", ""});
  }
  return devices;
}

}  // namespace crucible
