// Device detection for the backend picker: PoCL's CPU device is found through the ICD loader
// wherever setup.sh installed it; every entry names its backend and device.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/device/devices.h"

namespace crucible {
namespace {

TEST(Devices, OpenClDevicesHaveNamesAndPoclIsFoundWhenInstalled) {
  const auto devices = detectOpenClDevices();
  for (const auto& d : devices) {
    EXPECT_EQ(d.backend, "opencl");
    EXPECT_FALSE(d.name.empty());
  }
  if (std::filesystem::exists("/etc/OpenCL/vendors/pocl.icd")) {
    bool pocl = false;
    for (const auto& d : devices)
      pocl |= d.platform.find("Portable Computing") != std::string::npos;
    EXPECT_TRUE(pocl) << "pocl.icd is installed but no PoCL device was found";
  }
}

TEST(Devices, CudaDevicesOnlyWithTheDriver) {
  const auto devices = detectCudaDevices();
  const bool driver = std::filesystem::exists("/dev/nvidiactl") ||
                      std::filesystem::exists("/proc/driver/nvidia/gpus");
  EXPECT_EQ(!devices.empty(), driver);
  for (const auto& d : devices) EXPECT_EQ(d.backend, "cuda");
}

}  // namespace
}  // namespace crucible
