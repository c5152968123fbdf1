#include "core/verify/stage_fork_server.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>

#include "core/verify/device_lock.h"
#include "core/verify/worker_stage.h"

namespace crucible {

namespace fs = std::filesystem;

namespace {

// Landlock's scoping of signals and abstract sockets: without it a forked stage, which has no
// PID or network namespace of its own, could signal or reach processes outside its domain.
constexpr int kLandlockScopesFrom = 6;
// Importing torch on a busy machine; a server slower than this is not worth waiting for.
constexpr std::chrono::seconds kReadyTimeout{120};

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const StageServer>> servers;  // nullptr: classic
  bool retired = false;
  std::vector<fs::path> homes;  // the servers' own folders, removed when the process exits
};

// Never destroyed: the servers live as long as the process, and a server's thread must not be
// joined from a static destructor. The servers die with the process (they are killed when their
// parent thread ends).
Registry& registry() {
  static auto* r = new Registry();
  return *r;
}

void removeHomes() {
  auto& r = registry();
  // A thread still starting a server at exit holds the lock: its folders stay, exit goes on.
  std::unique_lock lock(r.mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;
  for (const auto& home : r.homes) {
    std::error_code ec;
    fs::remove_all(home, ec);
  }
}

bool wanted() {
  const char* setting = std::getenv("CRUCIBLE_FORK_SERVER");
  return setting == nullptr || std::string(setting) != "0";
}

bool within(const std::string& path, const std::string& folder) {
  if (path == folder) return true;
  return path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
         (folder.back() == '/' || path[folder.size()] == '/');
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  const auto c = fs::weakly_canonical(path, ec);
  return ec ? path : c.string();
}

/// Empty when the server's hello allows forking stages from it, else why not.
std::string whyNotUsable(const nlohmann::json& hello) {
  if (hello.value("landlock_abi", 0) < kLandlockScopesFrom) {
    return "Landlock ABI " + std::to_string(hello.value("landlock_abi", 0)) +
           " cannot scope signals";
  }
  if (hello.value("threads", 0) != 1) {
    return std::to_string(hello.value("threads", 0)) + " threads after importing torch";
  }
  if (!hello.contains("torch")) return "torch did not import: " + hello.value("torch_error", "");
  if (hello.value("triton_imported", true)) return "importing torch imported triton";
  return {};
}

std::shared_ptr<const StageServer> startServer(const WorkerLocation& worker,
                                               const std::string& backend,
                                               const std::string& tclLibrary) {
  const std::string root = jobsRoot();
  // Without a private jobs folder the server would have to see the whole temporary root, and
  // with it the desktop's sockets there.
  if (root == temporaryRoot()) return nullptr;
  std::string pattern = root + "/fork-server-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return nullptr;
  const fs::path home = pattern;
  fs::create_directories(home / "tmp");
  auto& r = registry();  // its mutex is held by the caller
  if (r.homes.empty()) std::atexit(removeHomes);
  r.homes.push_back(home);

  proc::ProcessSpec spec;
  spec.argv = {worker.python, "-I", "-B", worker.workerScript};
  spec.env = workerEnvironment(home, backend);
  spec.env["TMPDIR"] = (home / "tmp").string();
  // numpy's BLAS starts a thread pool when torch imports it; a fork from a process with other
  // threads copies their locks, held, into the child.
  spec.env["OPENBLAS_NUM_THREADS"] = "1";
  spec.workingDir = home.string();
  spec.limits.fileSizeBytes = ~0ULL;  // the children set their own (the hard limit stays)

  std::vector<std::string> readOnly = {fs::path(worker.python).parent_path().parent_path().string(),
                                       fs::path(worker.workerScript).parent_path().string(),
                                       "/sys/devices/system/cpu", "/sys/devices/system/node"};
  if (!tclLibrary.empty()) readOnly.push_back(fs::path(tclLibrary).parent_path().string());
  if (auto lock = deviceLockPrefix(backend)) readOnly.push_back(lock->parent_path().string());
  std::vector<std::string> writable = {root};
  const fs::path compileCache = baselineCompileCache();
  std::error_code ec;
  fs::create_directories(compileCache, ec);
  if (!ec) writable.push_back(compileCache.string());

  auto server = std::make_shared<StageServer>();
  const auto sandbox = proc::probeSandbox();
  if (sandbox.available) {
    spec.sandbox.enabled = true;
    spec.sandbox.sharePids = true;
    spec.sandbox.allowGpu = backend == "cuda";
    spec.sandbox.readOnlyPaths = readOnly;
    spec.sandbox.writablePaths = writable;
    for (const auto& p : readOnly) server->view.push_back(canonical(p));
    for (const auto& p : writable) server->view.push_back(canonical(p));
  }
  std::string error;
  server->server = proc::ForkServer::start(std::move(spec), {"fork-server"},
                                           std::chrono::milliseconds(kReadyTimeout), error);
  if (!server->server) {
    std::cerr << "crucible: worker stages start without the fork server: " << error << "\n";
    return nullptr;
  }
  const auto& hello = server->server->hello();
  const std::string why = whyNotUsable(hello);
  if (why.empty()) return server;
  // A kernel without Landlock's scoping is an expected setting, not worth a line each run.
  if (hello.value("landlock_abi", 0) >= kLandlockScopesFrom) {
    std::cerr << "crucible: worker stages start without the fork server: " << why << "\n";
  }
  return nullptr;
}

}  // namespace

std::string jobsRoot() {
  const std::string root = temporaryRoot();
  const std::string jobs = root + "/crucible-" + std::to_string(::getuid()) + "-jobs";
  return privateDirectory(jobs) ? jobs : root;
}

bool StageServer::sees(const std::vector<std::string>& paths) const {
  if (view.empty()) return true;
  for (const auto& path : paths) {
    const auto p = canonical(path);
    bool seen = false;
    for (const auto& folder : view) seen = seen || within(p, folder);
    if (!seen) return false;
  }
  return true;
}

std::shared_ptr<const StageServer> stageForkServer(const WorkerLocation& worker,
                                                   const std::string& backend,
                                                   const std::string& tclLibrary) {
  if (!wanted()) return nullptr;
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.retired) return nullptr;
  const std::string key =
      worker.python + "\n" + worker.workerScript + "\n" + backend + "\n" + tclLibrary;
  auto found = r.servers.find(key);
  if (found == r.servers.end()) {
    found = r.servers.emplace(key, startServer(worker, backend, tclLibrary)).first;
  }
  return found->second;
}

void retireStageForkServers(const std::string& why) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  if (!r.retired)
    std::cerr << "crucible: worker stages start without the fork server: " << why << "\n";
  r.retired = true;
}

}  // namespace crucible
