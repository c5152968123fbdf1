#include "core/util/locations.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace crucible {

namespace fs = std::filesystem;

namespace {
bool isExecutable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

std::string absolutePath(const fs::path& p) {
  std::error_code ec;
  auto a = fs::absolute(p, ec);
  return (ec ? p : a).lexically_normal().string();
}

std::optional<std::string> findOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && isExecutable(fs::path(dir) / name))
      return absolutePath(fs::path(dir) / name);
  }
  return std::nullopt;
}
}  // namespace

std::string temporaryRoot() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

std::string userCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/crucible";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/crucible";
  }
  return temporaryRoot() + "/crucible-cache";
}

std::string executableDir() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? absolutePath(fs::current_path()) : exe.parent_path().string();
}

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string locateTclLibrary() {
  if (const char* lib = std::getenv("CRUCIBLE_TCL_LIB"); lib && *lib) {
    return fs::exists(lib) ? absolutePath(lib) : std::string();
  }
  const fs::path candidate = fs::path(executableDir()).parent_path() / "lib" / "libcrucible_tcl.so";
  return fs::exists(candidate) ? absolutePath(candidate) : std::string();
}

std::string locateModelEngine() {
  if (const char* bin = std::getenv("CRUCIBLE_MODEL_BIN"); bin && *bin) {
    return isExecutable(bin) ? absolutePath(bin) : std::string();
  }
  const fs::path candidate = fs::path(executableDir()) / "crucible-model";
  return isExecutable(candidate) ? absolutePath(candidate) : std::string();
}

bool openclDriverRegistered() {
  const char* env = std::getenv("OCL_ICD_VENDORS");
  const fs::path vendors = env && *env ? fs::path(env) : fs::path("/etc/OpenCL/vendors");
  std::error_code ec;
  if (fs::is_regular_file(vendors, ec)) return vendors.extension() == ".icd";
  for (fs::directory_iterator it(vendors, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".icd") return true;
  return false;
}

WorkerLocation locateWorker() {
  WorkerLocation location;
  const fs::path exeDir = executableDir();
  const fs::path buildRoot = exeDir.parent_path().parent_path();  // build/bin -> repo

  if (const char* dir = std::getenv("CRUCIBLE_WORKER_DIR"); dir && *dir) {
    location.workerScript = absolutePath(fs::path(dir) / "worker.py");
  } else {
    for (const fs::path& candidate :
         {buildRoot / "core" / "worker" / "worker.py",
          exeDir.parent_path() / "share" / "crucible" / "worker" / "worker.py"}) {
      if (fs::exists(candidate)) {
        location.workerScript = absolutePath(candidate);
        break;
      }
    }
  }
  if (location.workerScript.empty() || !fs::exists(location.workerScript)) {
    location.problem = "the Python worker (worker.py) was not found next to " + exeDir.string() +
                       "; set CRUCIBLE_WORKER_DIR";
  }

  if (const char* python = std::getenv("CRUCIBLE_PYTHON"); python && *python) {
    location.python = absolutePath(python);
  } else if (isExecutable(buildRoot / ".venv" / "bin" / "python")) {
    // A .venv that is a link to another tree's: name the real folder, since the sandbox binds
    // the interpreter's prefix and a bound link would point at nothing inside it.
    std::error_code ec;
    const fs::path venv = fs::canonical(buildRoot / ".venv", ec);
    location.python = absolutePath((ec ? buildRoot / ".venv" : venv) / "bin" / "python");
  } else if (auto onPath = findOnPath("python3")) {
    location.python = *onPath;
  }
  if (location.python.empty() || !isExecutable(location.python)) {
    location.problem = "no Python interpreter found (run scripts/setup.sh, or set CRUCIBLE_PYTHON)";
  }
  return location;
}

bool privateDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) return false;
  return S_ISDIR(info.st_mode) && info.st_uid == ::getuid() && (info.st_mode & 022) == 0;
}

}  // namespace crucible
