#pragma once
// Running one worker stage (docs/WORKER_PROTOCOL.md): a private job folder, the child's
// environment, the sandboxed process and the signed result channel. Shared by the verifier and
// the synthesizer's trace stage.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/proc/process.h"
#include "core/util/locations.h"
#include "core/verify/evaluation.h"

namespace crucible {

/// A private folder for one job (under jobsRoot()), with the given subfolders; removed when done
/// unless kept.
class JobDir {
 public:
  explicit JobDir(const std::vector<std::string>& subfolders);
  ~JobDir();
  JobDir(const JobDir&) = delete;
  JobDir& operator=(const JobDir&) = delete;

  std::filesystem::path operator/(const char* sub) const { return root_ / sub; }
  const std::filesystem::path& root() const { return root_; }
  void keep() { keep_ = true; }

 private:
  std::filesystem::path root_;
  bool keep_ = false;
};

/// Writes `text` to `path`; throws std::runtime_error when it cannot.
void writeFile(const std::filesystem::path& path, const std::string& text);

/// The last `n` characters of a stage's output (for messages), "..." marking a cut.
std::string textTail(const std::string& text, std::size_t n = 600);

/// The Triton-to-OpenCL compiler's library for the opencl backend ("" for the others); throws
/// std::runtime_error naming where it was looked for when it is missing.
std::string tclLibraryFor(const std::string& backend);

/// The candidate's own copy of the inputs in `to` (hard links where the file system allows):
/// its worker reads them before any candidate code exists and then removes them, so the
/// candidate can never open them; `from` stays whole for the comparison.
void privateInputsCopy(const std::filesystem::path& from, const std::filesystem::path& to);

/// How every job on a reference starts: the file read, the worker found, a private job folder
/// with `subfolders` and the reference copied to `src-ref/reference.py` (the only copy stages
/// see). Throws BadInput when the file cannot be read, std::runtime_error when the worker is
/// missing.
class ReferenceJob {
 public:
  ReferenceJob(const std::string& referencePath, std::vector<std::string> subfolders);

  const std::string& source() const { return source_; }
  const WorkerLocation& worker() const { return worker_; }
  JobDir& dir() { return job_; }
  const JobDir& dir() const { return job_; }
  std::filesystem::path operator/(const char* sub) const { return job_ / sub; }
  const std::filesystem::path& referenceFile() const { return referenceFile_; }

 private:
  std::string source_;
  WorkerLocation worker_;
  JobDir job_;
  std::filesystem::path referenceFile_;
};

struct StageResult {
  proc::ExecutionResult execution;
  nlohmann::json facts;           // null when the stage reported nothing
  std::optional<double> checkMs;  // the parent's own measurement of the timing check
  int checkReps = 0;
  int forgedLines = 0;  // channel lines without the worker's signature
  // The stage's wall time, then each phase the worker announced (signed lines only), each
  // named "<stage>/<phase>" and lasting until the next; "<stage>/startup" is the time before the
  // first (the interpreter starting and importing torch).
  std::vector<StageTime> times;
};

/// What a caller that answers a stage while it runs gives StageRunner::run (timing_turns.h).
struct StageHooks {
  // Turn grants: the stage's stdin stays open after the channel's key and takes these bytes.
  std::shared_ptr<proc::StdinFeed> grants;
  // Each signed channel message, as it arrives (on the stage's own thread).
  std::function<void(const nlohmann::json&)> onMessage;
  // The stage's process group, once it runs.
  std::function<void(int)> onStarted;
  // Time the stage was held up by the caller, not counted against its timeout.
  std::function<std::chrono::milliseconds()> timeNotCounted;
};

/// A stage's whole environment: a small, known set, plus what GPU runtimes need.
std::map<std::string, std::string> workerEnvironment(const std::filesystem::path& scratch,
                                                     const std::string& backend);

/// Where the baseline stage keeps torch.compile's caches between runs (the user's cache folder).
std::filesystem::path baselineCompileCache();

/// The folders whose insides a stage may not read: the temporary root holding every job (the
/// reference's files, the expected outputs, other runs'), and for every stage but the baseline
/// the baseline's compile caches.
std::vector<std::string> hiddenFolders(const std::string& stage);

/// Runs worker stages for one job folder on one backend.
class StageRunner {
 public:
  /// `openclDevice`: the opencl backend's device choice (CRUCIBLE_OPENCL_DEVICE), if any.
  StageRunner(const WorkerLocation& worker, const JobDir& job, std::string backend,
              std::string tclLibrary, std::stop_token stop, std::string openclDevice = {});

  const proc::SandboxAvailability& sandbox() const { return sandbox_; }

  /// Runs `stage` on `job` (written to the job folder) with `scratch` as its working folder and
  /// HOME; `readOnly` and `writable` are the sandbox's binds beyond the interpreter and worker.
  StageResult run(const std::string& stage, const nlohmann::json& job,
                  const std::filesystem::path& scratch, std::vector<std::string> readOnly,
                  std::vector<std::string> writable, double timeoutSeconds,
                  std::optional<std::uint64_t> memory, const StageHooks& hooks = {});

 private:
  const WorkerLocation& worker_;
  const JobDir& job_;
  std::string backend_;
  std::string tclLibrary_;  // libcrucible_tcl.so for the opencl backend, else empty
  std::string openclDevice_;
  std::stop_token stop_;
  proc::SandboxAvailability sandbox_;
};

}  // namespace crucible
