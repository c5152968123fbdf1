#include "core/verify/device_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "core/util/locations.h"

namespace crucible {

namespace fs = std::filesystem;

namespace {

bool lockingWanted(const std::string& backend) {
  const char* setting = std::getenv("CRUCIBLE_DEVICE_LOCK");
  const std::string mode = setting ? setting : "auto";
  if (mode == "off") return false;
  if (mode == "on") return true;
  return backend == "cuda";
}

bool lockFile(const fs::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
}

/// flock(fd, mode) without blocking past `deadline` (flock itself has no timeout).
bool lockBy(int fd, int mode, std::chrono::steady_clock::time_point deadline) {
  while (flock(fd, mode | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

std::optional<fs::path> deviceLockPrefix(const std::string& backend) {
  if (!lockingWanted(backend)) return std::nullopt;
  const fs::path dir =
      fs::path(temporaryRoot()) / ("crucible-" + std::to_string(getuid()) + "-locks");
  if (!privateDirectory(dir.string())) return std::nullopt;
  // One lock per device the backend runs on: cuda on the GPU, the others on the CPU. Processes
  // pinned to other GPUs (CUDA_VISIBLE_DEVICES, as the service's lanes are) take other locks.
  std::string name = backend == "cuda" ? "cuda" : "cpu";
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (backend == "cuda" && visible != nullptr && *visible != '\0') {
    name += '-';
    for (const char* c = visible; *c != '\0'; ++c) {
      name += std::isalnum(static_cast<unsigned char>(*c)) || *c == '-' ? *c : '_';
    }
  }
  const fs::path prefix = dir / name;
  for (const char* suffix : {".gate", ".rw"}) {
    if (!lockFile(prefix.string() + suffix)) return std::nullopt;
  }
  return prefix;
}

SharedDeviceHold::SharedDeviceHold(const std::optional<fs::path>& prefix,
                                   std::chrono::milliseconds limit) {
  if (!prefix) return;
  gate_ = open((prefix->string() + ".gate").c_str(), O_RDONLY | O_CLOEXEC);
  rw_ = open((prefix->string() + ".rw").c_str(), O_RDONLY | O_CLOEXEC);
  if (gate_ < 0 || rw_ < 0) return;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  if (!lockBy(gate_, LOCK_EX, deadline)) return;
  held_ = lockBy(rw_, LOCK_SH, deadline);
  flock(gate_, LOCK_UN);
}

SharedDeviceHold::~SharedDeviceHold() {
  if (held_) flock(rw_, LOCK_UN);
  for (int fd : {gate_, rw_}) {
    if (fd >= 0) close(fd);
  }
}

}  // namespace crucible
