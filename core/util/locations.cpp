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
  return locateTclLibraryFrom(executableDir());
}

std::string locateTclLibraryFrom(const std::string& executableFolder) {
  if (const char* lib = std::getenv("CRUCIBLE_TCL_LIB"); lib && *lib) {
    return fs::exists(lib) ? absolutePath(lib) : std::string();
  }
  // The build tree's build/lib, then an installed prefix's private lib/crucible.
  const fs::path lib = fs::path(executableFolder).parent_path() / "lib";
  for (const fs::path& candidate :
       {lib / "libcrucible_tcl.so", lib / "crucible" / "libcrucible_tcl.so"}) {
    if (fs::exists(candidate)) return absolutePath(candidate);
  }
  return {};
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

std::string userPythonEnvironment() {
  const auto absolute = [](const char* value) {
    return value != nullptr && value[0] != '\0' && fs::path(value).is_absolute();
  };
  const char* dataHome = std::getenv("XDG_DATA_HOME");
  if (absolute(dataHome)) return (fs::path(dataHome) / "crucible" / "venv").string();
  const char* home = std::getenv("HOME");
  if (absolute(home)) return (fs::path(home) / ".local" / "share" / "crucible" / "venv").string();
  return {};
}

namespace {
// A venv's interpreter, named through the venv's real folder: the sandbox binds the
// interpreter's prefix, and a bound link (a .venv linked to another tree's) would point at
// nothing inside it.
std::optional<std::string> venvPython(const fs::path& venv) {
  if (venv.empty() || !isExecutable(venv / "bin" / "python")) return std::nullopt;
  std::error_code ec;
  const fs::path real = fs::canonical(venv, ec);
  return absolutePath((ec ? venv : real) / "bin" / "python");
}
}  // namespace

WorkerLocation locateWorkerFrom(const std::string& executableFolder) {
  WorkerLocation location;
  const fs::path exeDir = executableFolder;
  const fs::path buildRoot = exeDir.parent_path().parent_path();  // build/bin -> repo
  const fs::path installedWorker = exeDir.parent_path() / "share" / "crucible" / "worker";

  if (const char* dir = std::getenv("CRUCIBLE_WORKER_DIR"); dir && *dir) {
    location.workerScript = absolutePath(fs::path(dir) / "worker.py");
  } else {
    for (const fs::path& candidate :
         {buildRoot / "core" / "worker" / "worker.py", installedWorker / "worker.py"}) {
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
  // An installed Crucible (a package) has no source tree to run scripts/setup.sh from: its
  // environment is the one crucible-setup-python makes, and a bare python3 without torch would
  // only fail later and less clearly.
  const bool installed = location.workerScript == absolutePath(installedWorker / "worker.py");
  const std::string userVenv = userPythonEnvironment();

  if (const char* python = std::getenv("CRUCIBLE_PYTHON"); python && *python) {
    location.python = absolutePath(python);
  } else if (auto project = venvPython(buildRoot / ".venv")) {
    location.python = *project;
  } else if (auto user = venvPython(userVenv)) {
    location.python = *user;
  } else if (auto onPath = findOnPath("python3"); onPath && !installed) {
    location.python = *onPath;
  }
  if (location.python.empty() || !isExecutable(location.python)) {
    location.problem =
        installed
            ? "no Python environment for the worker: run `crucible-setup-python` (it makes " +
                  (userVenv.empty() ? std::string("one") : userVenv) + "), or set CRUCIBLE_PYTHON"
            : "no Python interpreter found (run scripts/setup.sh, or set CRUCIBLE_PYTHON)";
  }
  return location;
}

WorkerLocation locateWorker() {
  return locateWorkerFrom(executableDir());
}

bool privateDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) return false;
  return S_ISDIR(info.st_mode) && info.st_uid == ::getuid() && (info.st_mode & 022) == 0;
}

}  // namespace crucible
