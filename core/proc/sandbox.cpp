#include "core/proc/sandbox.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace crucible::proc::sandbox {

namespace fs = std::filesystem;

namespace {

bool isExecutableFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

void add(std::vector<std::string>& argv, std::initializer_list<std::string_view> words) {
  for (auto w : words) argv.emplace_back(w);
}

// The top-level system directories a program needs to start. On merged-/usr systems /bin, /lib
// and friends are symlinks into /usr; they are recreated as the same symlinks so that the
// sandbox has one read-only copy of /usr and paths like /lib64/ld-linux-x86-64.so.2 resolve.
void addSystemDirs(std::vector<std::string>& argv, bool sharePids) {
  add(argv, {"--ro-bind", "/usr", "/usr"});
  for (const char* dir : {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}) {
    std::error_code ec;
    const auto status = fs::symlink_status(dir, ec);
    if (ec) continue;
    if (fs::is_symlink(status)) {
      const auto target = fs::read_symlink(dir, ec);
      if (!ec) add(argv, {"--symlink", target.string(), dir});
    } else if (fs::is_directory(status)) {
      add(argv, {"--ro-bind", dir, dir});
    }
  }
  add(argv, {"--ro-bind-try", "/etc", "/etc"});
  // Fresh /proc (of the new PID namespace; the host's when the namespace is shared), a minimal
  // /dev, and an empty /tmp so that nothing the host keeps in /tmp is visible.
  if (sharePids) {
    add(argv, {"--bind", "/proc", "/proc"});
  } else {
    add(argv, {"--proc", "/proc"});
  }
  add(argv, {"--dev", "/dev", "--tmpfs", "/tmp"});
}

void addGpu(std::vector<std::string>& argv) {
  std::error_code ec;
  std::vector<std::string> devices;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with("nvidia")) devices.push_back(entry.path().string());
  }
  std::sort(devices.begin(), devices.end());
  for (const auto& dev : devices) add(argv, {"--dev-bind", dev, dev});
  add(argv, {"--ro-bind-try", "/sys", "/sys"});
  add(argv, {"--ro-bind-try", "/proc/driver/nvidia", "/proc/driver/nvidia"});
  add(argv, {"--ro-bind-try", "/usr/local/nvidia", "/usr/local/nvidia"});
  add(argv, {"--bind-try", "/run/nvidia-persistenced", "/run/nvidia-persistenced"});
}

struct Bind {
  std::string path;  // canonical: bwrap creates mount points, so symlinks are resolved here
  bool writable;
};

std::size_t depth(const std::string& path) {
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

// Read-only paths that do not exist are skipped (callers list optional locations such as caches);
// a writable path that does not exist is an error because the child expects to write there.
std::string collectBinds(const SandboxSpec& spec, std::vector<Bind>& binds) {
  for (const auto& p : spec.readOnlyPaths) {
    std::error_code ec;
    const auto canonical = fs::canonical(p, ec);
    if (!ec) binds.push_back({canonical.string(), false});
  }
  for (const auto& p : spec.writablePaths) {
    std::error_code ec;
    const auto canonical = fs::canonical(p, ec);
    if (ec) return "sandbox writable path does not exist: " + p;
    binds.push_back({canonical.string(), true});
  }
  // Parents before children, so a writable folder inside a read-only one (and the reverse) ends up
  // mounted on top; at equal depth read-only comes first, so the same path listed twice is
  // writable.
  std::stable_sort(binds.begin(), binds.end(),
                   [](const Bind& a, const Bind& b) { return depth(a.path) < depth(b.path); });
  return {};
}

}  // namespace

std::optional<std::string> findBubblewrap() {
  if (isExecutableFile("/usr/bin/bwrap")) return "/usr/bin/bwrap";
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::string_view rest(path);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const auto dir = rest.substr(0, colon);
    if (!dir.empty() && dir.front() == '/') {
      std::string candidate = std::string(dir) + "/bwrap";
      if (isExecutableFile(candidate)) return candidate;
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

BwrapCommand bubblewrapCommand(const std::string& bwrapPath, const ProcessSpec& spec,
                               int statusFd) {
  BwrapCommand cmd;
  auto& argv = cmd.argv;
  argv.push_back(bwrapPath);
  // No --new-session: the child keeps the process group made outside, so killing that group also
  // reaches everything inside. --cap-drop ALL matters when Crucible runs as root: bwrap keeps all
  // capabilities for a privileged caller otherwise. --unshare-all includes the network.
  add(argv, {"--die-with-parent", "--cap-drop", "ALL"});
  if (spec.sandbox.sharePids) {
    add(argv, {"--unshare-user-try", "--unshare-ipc", "--unshare-net", "--unshare-uts",
               "--unshare-cgroup-try"});
  } else {
    add(argv, {"--unshare-all"});
  }
  if (statusFd >= 0) add(argv, {"--json-status-fd", std::to_string(statusFd)});
  addSystemDirs(argv, spec.sandbox.sharePids);
  if (spec.sandbox.allowGpu) addGpu(argv);

  std::vector<Bind> binds;
  cmd.error = collectBinds(spec.sandbox, binds);
  if (!cmd.error.empty()) return cmd;
  for (const auto& b : binds) add(argv, {b.writable ? "--bind" : "--ro-bind", b.path, b.path});

  if (!spec.workingDir.empty()) {
    std::error_code ec;
    const auto dir = fs::canonical(spec.workingDir, ec);
    if (ec) {
      cmd.error = "working directory does not exist: " + spec.workingDir;
      return cmd;
    }
    add(argv, {"--chdir", dir.string()});
  }
  argv.emplace_back("--");
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  return cmd;
}

}  // namespace crucible::proc::sandbox
