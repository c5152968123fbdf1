#include "core/verify/worker_stage.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "core/util/file_links.h"
#include "core/util/locations.h"
#include "core/verify/bad_input.h"
#include "core/verify/channel_auth.h"
#include "core/verify/device_lock.h"
#include "core/verify/stage_fork_server.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

std::map<std::string, std::string> workerEnvironment(const fs::path& scratch,
                                                     const std::string& backend) {
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"HOME", scratch.string()},
      {"LANG", "C.UTF-8"},
      {"PYTHONDONTWRITEBYTECODE", "1"},
      {"PYTHONUNBUFFERED", "1"},
      {"CRUCIBLE_RESULT_FD", "3"},
      {"TRITON_CACHE_DIR", (scratch / "triton-cache").string()},
      {"TORCHINDUCTOR_CACHE_DIR", (scratch / "inductor-cache").string()},
      {"XDG_CACHE_HOME", (scratch / "cache").string()},
      {"MPLCONFIGDIR", (scratch / "cache").string()},
  };
  if (backend == "interpret") env["TRITON_INTERPRET"] = "1";
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    const bool passes = name == "LD_LIBRARY_PATH" || name == "OMP_NUM_THREADS" ||
                        name.rfind("CUDA_", 0) == 0 || name.rfind("NVIDIA_", 0) == 0 ||
                        name == "NCCL_NVLS_ENABLE" || name == "TORCH_SYMM_MEM_DISABLE_MULTICAST" ||
                        name == "NVSHMEM_DISABLE_NVLS";
    // PoCL's and the ICD loader's own settings (device count, threads, debugging).
    const bool opencl =
        backend == "opencl" && (name.rfind("POCL_", 0) == 0 || name.rfind("OCL_ICD_", 0) == 0);
    if (passes || opencl) env[name] = entry.substr(eq + 1);
  }
  return env;
}

JobDir::JobDir(const std::vector<std::string>& subfolders) {
  std::string pattern = jobsRoot() + "/crucible-job-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a job folder in " + pattern);
  }
  root_ = pattern;
  for (const auto& sub : subfolders) fs::create_directories(root_ / sub);
}

JobDir::~JobDir() {
  if (!keep_) {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
}

void writeFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string textTail(const std::string& text, std::size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

std::string tclLibraryFor(const std::string& backend) {
  if (backend != "opencl") return "";
  std::string library = locateTclLibrary();
  if (library.empty()) {
    throw std::runtime_error("--backend opencl: libcrucible_tcl.so was not found next to " +
                             executableDir() +
                             " (../lib/); build the crucible_tcl target or set CRUCIBLE_TCL_LIB");
  }
  return library;
}

void privateInputsCopy(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    if (!entry.is_regular_file()) continue;
    if (const auto ec = linkOrCopyFile(entry.path(), to / entry.path().filename())) {
      throw fs::filesystem_error("cannot give the candidate its inputs", entry.path(), ec);
    }
  }
}

namespace {

std::string readReference(const std::string& path) {
  auto source = readFile(path);
  if (!source) throw BadInput(path + ": cannot read the file");
  return std::move(*source);
}

WorkerLocation locateWorkerOrThrow() {
  WorkerLocation worker = locateWorker();
  if (!worker.problem.empty()) throw std::runtime_error(worker.problem);
  return worker;
}

std::vector<std::string> withSourceFolder(std::vector<std::string> subfolders) {
  subfolders.insert(subfolders.begin(), "src-ref");
  return subfolders;
}

}  // namespace

ReferenceJob::ReferenceJob(const std::string& referencePath, std::vector<std::string> subfolders)
    : source_(readReference(referencePath)),
      worker_(locateWorkerOrThrow()),
      job_(withSourceFolder(std::move(subfolders))),
      referenceFile_(job_ / "src-ref" / "reference.py") {
  writeFile(referenceFile_, source_);
}

StageRunner::StageRunner(const WorkerLocation& worker, const JobDir& job, std::string backend,
                         std::string tclLibrary, std::stop_token stop, std::string openclDevice)
    : worker_(worker),
      job_(job),
      backend_(std::move(backend)),
      tclLibrary_(std::move(tclLibrary)),
      openclDevice_(std::move(openclDevice)),
      stop_(std::move(stop)) {
  sandbox_ = proc::probeSandbox();
}

std::vector<std::string> hiddenFolders(const std::string& stage) {
  std::vector<std::string> hidden{temporaryRoot()};
  if (stage != "baseline") hidden.push_back(baselineCompileCache().string());
  return hidden;
}

std::filesystem::path baselineCompileCache() {
  return fs::path(userCacheDir()) / "baseline";
}

namespace {

/// The opencl candidate's extras: the shim loads the compiler through ctypes and caches compiled
/// programs in the stage's scratch. PoCL sizes its CPU device from sysfs (hwloc): without the
/// CPU topology it finds no memory and refuses to run ("Not enough memory to run on this
/// device").
void addOpenclCompiler(proc::ProcessSpec& spec, const fs::path& scratch,
                       const std::string& tclLibrary, const std::string& openclDevice,
                       std::vector<std::string>& readOnly) {
  spec.env["CRUCIBLE_TCL_LIB"] = tclLibrary;
  const fs::path cache = scratch / "tcl-cache";
  fs::create_directories(cache);
  spec.env["CRUCIBLE_TCL_CACHE_DIR"] = cache.string();
  if (!openclDevice.empty()) spec.env["CRUCIBLE_OPENCL_DEVICE"] = openclDevice;
  readOnly.push_back(fs::path(tclLibrary).parent_path().string());
  readOnly.push_back("/sys/devices/system/cpu");
  readOnly.push_back("/sys/devices/system/node");
}

/// torch.compile's caches for the reference's timer outlive the job: a warm cache spares most
/// of the compile. They hold code made from the reference only (the user's own file), and no
/// other stage may read them (hiddenFolders).
void addBaselineCompileCache(proc::ProcessSpec& spec, std::vector<std::string>& writable) {
  const fs::path cache = baselineCompileCache();
  std::error_code ec;
  fs::create_directories(cache, ec);
  if (ec) return;  // the caches stay in the scratch, cold every run
  spec.env["TORCHINDUCTOR_CACHE_DIR"] = (cache / "inductor").string();
  spec.env["TRITON_CACHE_DIR"] = (cache / "triton").string();
  writable.push_back(cache.string());
}

/// The stage's signed channel lines read back: its facts, its phases as times, and the outside
/// timing check's interval.
void readChannel(StageResult& result, const std::string& stage, const std::string& key,
                 const json& job, std::chrono::steady_clock::time_point started,
                 std::chrono::steady_clock::time_point finished) {
  std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> phases{
      {"startup", started}};
  std::optional<std::chrono::steady_clock::time_point> begin, end;
  std::optional<int> announcedReps;
  for (const auto& line : result.execution.channel) {
    if (line.text.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    auto opened = openChannelLine(line.text, key);
    if (!opened) {
      ++result.forgedLines;
      continue;
    }
    const json& message = *opened;
    const auto type = message.value("type", "");
    if (type == "facts") result.facts = message.value("facts", json());
    if (type == "phase") phases.emplace_back(message.value("name", "?"), line.received);
    if (type == "phase" && message.value("name", "") == "timing-check-begin") {
      begin = line.received;
      // The worker picks the count from the candidate's own timed calls (enough for a few
      // hundred milliseconds); the job's check_reps is its upper bound.
      if (message.contains("reps") && message["reps"].is_number_integer()) {
        announcedReps = message["reps"].get<int>();
      }
    }
    if (type == "phase" && message.value("name", "") == "timing-check-end") end = line.received;
  }
  result.times.push_back({stage, std::chrono::duration<double>(finished - started).count()});
  for (std::size_t i = 0; i < phases.size() && phases.size() > 1; ++i) {
    const auto until = i + 1 < phases.size() ? phases[i + 1].second : finished;
    result.times.push_back({stage + "/" + phases[i].first,
                            std::chrono::duration<double>(until - phases[i].second).count()});
  }
  const int maxReps = job.contains("timing") ? job["timing"].value("check_reps", 0) : 0;
  result.checkReps = announcedReps ? std::clamp(*announcedReps, 0, maxReps) : maxReps;
  if (begin && end && result.checkReps > 0) {
    result.checkMs = std::chrono::duration<double, std::milli>(*end - *begin).count();
  }
}

/// A forked stage that could not start, or that stopped before it said anything because its
/// walls did not all go up (the worker's WALLS_MISSING).
bool notStartedByServer(const proc::ExecutionResult& execution) {
  constexpr int kWallsMissing = 75;
  return execution.launchFailed ||
         (execution.exitCode == kWallsMissing && execution.channel.empty() && !execution.cancelled);
}

}  // namespace

StageResult StageRunner::run(const std::string& stage, const json& givenJob,
                             const fs::path& scratch, std::vector<std::string> readOnly,
                             std::vector<std::string> writable, double timeoutSeconds,
                             std::optional<std::uint64_t> memory, const StageHooks& hooks) {
  json job = givenJob;
  // The profile stage runs the candidate on the device too (`crucible profile`).
  const bool runsCandidate = stage == "candidate" || stage == "profile";
  const bool onDevice = stage == "reference" || stage == "baseline" || runsCandidate;
  if (onDevice) {
    // The stages that run and time work on the device take turns with other verifications'.
    if (auto lock = deviceLockPrefix(backend_)) {
      job["device_lock"] = lock->string();
      readOnly.push_back(lock->parent_path().string());
    }
  }
  const fs::path jobFile = job_.root() / (stage + "-job.json");
  writeFile(jobFile, job.dump(2));

  proc::ProcessSpec spec;
  spec.argv = {worker_.python, "-I", "-B", worker_.workerScript, stage, jobFile.string()};
  spec.env = workerEnvironment(scratch, backend_);
  // The channel's signing key travels on stdin, which the worker reads and closes before any
  // user code runs.
  const std::string key = makeChannelKey();
  spec.env["CRUCIBLE_CHANNEL_KEY"] = "stdin";
  spec.stdinText = key + "\n";
  if (hooks.grants) {
    spec.stdinFeed = hooks.grants;
    spec.env["CRUCIBLE_TURNS"] = "stdin";
  }
  if (hooks.onMessage) {
    spec.onChannelLine = [&](const proc::ChannelLine& line) {
      if (auto opened = openChannelLine(line.text, key)) hooks.onMessage(*opened);
    };
  }
  spec.onStarted = hooks.onStarted;
  spec.timeNotCounted = hooks.timeNotCounted;
  spec.workingDir = scratch.string();
  spec.limits.wallTimeout =
      std::chrono::milliseconds(static_cast<long long>(timeoutSeconds * 1000));
  spec.limits.memoryBytes = memory;
  spec.sandbox.enabled = sandbox_.available;
  spec.sandbox.allowGpu = backend_ == "cuda";
  // The interpreter's prefix (a venv or an installation), the worker, and the job file.
  const fs::path pythonPrefix = fs::path(worker_.python).parent_path().parent_path();
  readOnly.push_back(pythonPrefix.string());
  readOnly.push_back(fs::path(worker_.workerScript).parent_path().string());
  readOnly.push_back(jobFile.string());
  // The stages that run the candidate's kernels: the candidate, `profile` and `ir`
  // (core/inspect).
  const bool runsKernels = runsCandidate || stage == "ir";
  if (backend_ == "opencl" && runsKernels) {
    addOpenclCompiler(spec, scratch, tclLibrary_, openclDevice_, readOnly);
  }
  // The worker raises the kernel's own walls (Landlock, seccomp) from this plan before it
  // imports torch (os_sandbox.py): the paths it needs, and the folders whose insides it may not
  // read. Temporary files go to its scratch.
  const fs::path tmp = scratch / "tmp";
  fs::create_directories(tmp);
  spec.env["TMPDIR"] = tmp.string();
  writable.push_back(scratch.string());
  if (stage == "baseline") addBaselineCompileCache(spec, writable);
  spec.env["CRUCIBLE_SANDBOX"] = json{{"read", readOnly},
                                      {"write", writable},
                                      {"hidden", hiddenFolders(stage)},
                                      {"gpu", backend_ == "cuda" && (onDevice || runsKernels)}}
                                     .dump();
  spec.sandbox.readOnlyPaths = std::move(readOnly);
  spec.sandbox.writablePaths = std::move(writable);
  const auto server = stageForkServer(worker_, backend_, tclLibrary_);
  if (server && server->sees(spec.sandbox.readOnlyPaths) &&
      server->sees(spec.sandbox.writablePaths)) {
    spec.forkServer = server->server;
    spec.sandbox.enabled = false;  // the server's sandbox stands around it, and its own walls
  }

  StageResult result;
  const auto started = std::chrono::steady_clock::now();
  result.execution = proc::run(spec, stop_);
  if (spec.forkServer && notStartedByServer(result.execution)) {
    // Before any user code: the stage runs again the classic way, and so do all later ones.
    retireStageForkServers(result.execution.launchFailed ? result.execution.launchError
                                                         : result.execution.stderrText);
    spec.forkServer = nullptr;
    spec.sandbox.enabled = sandbox_.available;
    result.execution = proc::run(spec, stop_);
  }
  readChannel(result, stage, key, job, started, std::chrono::steady_clock::now());
  return result;
}

}  // namespace crucible
