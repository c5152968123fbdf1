#include "core/inspect/profile_run.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/util/file_links.h"
#include "core/util/locations.h"
#include "core/verify/bad_input.h"
#include "core/verify/verifier.h"
#include "core/verify/worker_stage.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;

std::uint64_t physicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages) * size : 8 * kGiB;
}

void report(const std::function<void(const ProfileProgress&)>& progress, const char* stage,
            const std::string& message) {
  if (progress) progress({stage, message});
}

/// Why a stage left no facts, in the profile's error terms.
ProfileError silentStage(const StageResult& stage, double timeoutSeconds) {
  const auto& x = stage.execution;
  std::ostringstream m;
  if (x.timedOut) {
    m << "it did not finish in " << timeoutSeconds << " s";
    return {"timeout", m.str(), "", {}};
  }
  if (x.memoryExceeded) return {"memory", "it exceeded the memory limit", "", {}};
  if (x.termSignal != 0) {
    m << "its process was killed by signal " << x.termSignal << ": " << textTail(x.stderrText);
  } else {
    m << "its process ended (exit " << x.exitCode
      << ") without reporting: " << textTail(x.stderrText);
  }
  return {"crash", m.str(), "", {}};
}

/// The reference stage, reduced to what the profile needs: one trial's inputs and the device's
/// peaks. Its problems are the user's: BadInput with the file and line.
json referenceFacts(const ProfileRequest& request, const std::string& backend,
                    const ReferenceJob& job, StageRunner& runner, std::uint64_t ram) {
  json refJob = {{"reference_path", job.referenceFile().string()},
                 {"out_dir", (job / "ref").string()},
                 {"inputs_dir", (job / "inputs").string()},
                 {"backend", backend},
                 {"device", backend == "cuda" ? "cuda" : "cpu"},
                 {"seed", request.seed},
                 {"trials", 1},
                 {"timing_sets", 1},
                 {"threads", request.threads},
                 {"alt_batch", false}};
  auto stage = runner.run("reference", refJob, job / "ref", {(job / "src-ref").string()},
                          {(job / "ref").string(), (job / "inputs").string()},
                          std::max(600.0, request.timeoutSeconds), ram * 3 / 4);
  if (stage.execution.cancelled) throw std::runtime_error("cancelled");
  if (!stage.facts.is_object()) {
    throw BadInput(request.referencePath + ": the reference could not be run: " +
                   silentStage(stage, std::max(600.0, request.timeoutSeconds)).message);
  }
  const json error = stage.facts.value("error", json());
  if (error.is_object()) {
    if (error.value("stage", "") == "infrastructure") {
      throw std::runtime_error("the worker failed running the reference: " +
                               error.value("message", ""));
    }
    std::string where = request.referencePath;
    if (error.contains("line") && error["line"].is_number_integer()) {
      where += ":" + std::to_string(error["line"].get<int>());
    }
    throw BadInput(where + ": " + error.value("message", std::string("the reference failed")));
  }
  return stage.facts;
}

DevicePeaks peaksOf(const json& refFacts, const std::string& backend) {
  const json device = refFacts.value("device", json::object());
  DevicePeaks d;
  d.backend = backend;
  if (!device.is_object()) return d;
  d.name = device.value("name", std::string());
  d.bandwidthGBs = device.value("bandwidth_gbs", 0.0);
  d.peakGflops = device.value("peak_gflops", 0.0);
  d.method = device.value("method", std::string());
  if (backend == "opencl") {
    d.method += " (PyTorch on the CPU that PoCL runs the kernels on)";
  }
  return d;
}

struct ProfileStages {
  const ProfileRequest& request;
  const ReferenceJob& job;
  fs::path candidateFile;
  std::uint64_t memory;
};

/// One run of the `profile` stage in `mode` (time | count) through `runner`.
StageResult profileStage(const ProfileStages& s, StageRunner& runner, const std::string& mode,
                         const std::string& backend) {
  const std::string out = mode == "time" ? "prof" : "count";
  const std::string inputs = out + "-inputs";
  privateInputsCopy(s.job / "inputs", s.job / inputs.c_str());
  json job = {{"candidate_path", s.candidateFile.string()},
              {"inputs_dir", (s.job / inputs.c_str()).string()},
              {"private_inputs", true},
              {"out_dir", (s.job / out.c_str()).string()},
              {"backend", backend},
              {"device", backend == "cuda" ? "cuda" : "cpu"},
              {"mode", mode},
              {"seed", s.request.seed},
              {"threads", s.request.threads},
              {"calls", s.request.calls},
              {"warmup", s.request.warmup},
              {"count_cap_s", s.request.countCapSeconds}};
  auto stage = runner.run("profile", job, s.job / out.c_str(), {(s.job / "src-cand").string()},
                          {(s.job / out.c_str()).string(), (s.job / inputs.c_str()).string()},
                          s.request.timeoutSeconds, s.memory);
  if (stage.execution.cancelled) throw std::runtime_error("cancelled");
  return stage;
}

/// The harness's own failure in a stage is not the candidate's.
void throwOnInfrastructure(const json& facts) {
  const json error = facts.is_object() ? facts.value("error", json()) : json();
  if (error.is_object() && error.value("stage", "") == "infrastructure") {
    throw std::runtime_error("the worker failed profiling the candidate: " +
                             error.value("message", ""));
  }
}

}  // namespace

KernelProfile profileCandidate(const ProfileRequest& request,
                               const std::function<void(const ProfileProgress&)>& progress,
                               std::stop_token stop) {
  if (request.calls < 1) throw BadInput("--calls must be at least 1");
  if (request.warmup < 0) throw BadInput("--warmup must not be negative");
  const auto candidateSource = readFile(request.candidatePath);
  if (!candidateSource) throw BadInput(request.candidatePath + ": cannot read the file");
  ReferenceJob job(request.referencePath,
                   {"src-cand", "inputs", "ref", "prof", "prof-inputs", "count", "count-inputs"});
  const std::string backend = resolveBackend(request.backend);
  const fs::path candidateFile = job / "src-cand" / "candidate.py";
  writeFile(candidateFile, *candidateSource);
  const std::uint64_t ram = physicalMemory();

  StageRunner runner(job.worker(), job.dir(), backend, tclLibraryFor(backend), stop,
                     request.openclDevice);
  report(progress, "reference", "running the reference (" + backend + "): inputs and peaks");
  const json refFacts = referenceFacts(request, backend, job, runner, ram);
  const ProfileStages stages{
      request, job, candidateFile,
      request.memoryLimitBytes.value_or(std::min<std::uint64_t>(8 * kGiB, ram * 6 / 10))};

  report(progress, "time", "timing each launch (" + backend + ")");
  const StageResult timed = profileStage(stages, runner, "time", backend);
  throwOnInfrastructure(timed.facts);
  KernelProfile profile;
  json counted;
  std::optional<ProfileError> countFailure;
  if (timed.facts.is_object() && timed.facts.value("error", json()).is_null()) {
    report(progress, "count", "counting bytes and FLOPs on Triton's interpreter");
    StageRunner interpreter(job.worker(), job.dir(), "interpret", "", stop);
    const StageResult count = profileStage(stages, interpreter, "count", "interpret");
    throwOnInfrastructure(count.facts);
    counted = count.facts;
    if (!count.facts.is_object()) countFailure = silentStage(count, request.timeoutSeconds);
  }
  profile = profileFromFacts(timed.facts, counted, peaksOf(refFacts, backend));
  if (!timed.facts.is_object()) profile.error = silentStage(timed, request.timeoutSeconds);
  if (countFailure)
    profile.countNote = "counting on the interpreter failed: " + countFailure->message;
  if (profile.error) profile.error->file = request.candidatePath;
  profile.candidate = request.candidatePath;
  profile.reference = request.referencePath;
  return profile;
}

}  // namespace crucible
