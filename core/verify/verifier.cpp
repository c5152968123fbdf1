#include "core/verify/verifier.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "core/proc/process.h"
#include "core/util/file_links.h"
#include "core/util/locations.h"
#include "core/verify/baseline_keeper.h"
#include "core/verify/compare_outputs.h"
#include "core/verify/device_lock.h"
#include "core/verify/extract.h"
#include "core/verify/judge.h"
#include "core/verify/timing_turns.h"
#include "core/verify/worker_stage.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;

struct SandboxSummary {
  bool held = false;
  std::string note;  // what held, or why nothing did
};

// The candidate ran sandboxed when bubblewrap stood around it, or when the worker's own
// kernel walls all went up: Landlock for files, seccomp for escapes and for new processes.
SandboxSummary summarizeSandbox(const proc::SandboxAvailability& bwrap, const json& facts) {
  const json walls = facts.is_object() ? facts.value("os_sandbox", json::object()) : json();
  auto applied = [&](const char* part) {
    return walls.is_object() && walls.contains(part) && walls[part].is_object() &&
           walls[part].value("applied", false);
  };
  const bool files = applied("files"), syscalls = applied("syscalls"),
             processes = applied("processes");
  // A stage forked by the fork server shares the server's bubblewrap; its own walls are the
  // kernel's, which it must raise to run at all (fork_server.py).
  const bool forked = walls.is_object() && walls.value("forked", false);
  std::vector<std::string> held;
  if (bwrap.available) held.emplace_back(forked ? "bubblewrap (the fork server's)" : "bubblewrap");
  if (files) {
    held.push_back("Landlock ABI " + std::to_string(walls["files"].value("landlock", 0)));
  }
  if (syscalls && processes) held.emplace_back("seccomp");
  SandboxSummary s;
  s.held = (bwrap.available && !forked) || (files && syscalls && processes);
  for (const auto& h : held) s.note += (s.note.empty() ? "" : " + ") + h;
  if (!s.held) {
    s.note = bwrap.reason + (held.empty() ? "" : "; only " + s.note + " held");
  }
  return s;
}

bool gpuVisible() {
  std::error_code ec;
  return fs::exists("/dev/nvidia0", ec) || fs::exists("/dev/nvidiactl", ec);
}

std::uint64_t physicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages) * size : 8 * kGiB;
}

/// The reference's problems are the user's to fix: name the file and the line.
[[noreturn]] void badReference(const std::string& path, const json& error) {
  std::string where = path;
  if (error.contains("line") && error["line"].is_number_integer()) {
    where += ":" + std::to_string(error["line"].get<int>());
  }
  throw BadInput(where + ": " + error.value("message", std::string("the reference failed")));
}

void checkReferenceStatically(const std::string& path, const json& ref) {
  if (!ref.is_object()) return;
  if (ref.contains("syntax_error") && !ref["syntax_error"].is_null()) {
    badReference(path, {{"line", ref["syntax_error"].value("line", 0)},
                        {"message", "syntax error: " + ref["syntax_error"].value("message", "")}});
  }
  for (const auto& [key, what] : std::vector<std::pair<const char*, const char*>>{
           {"model_line", "class Model"},
           {"get_inputs_line", "get_inputs()"},
           {"get_init_inputs_line", "get_init_inputs()"}}) {
    if (!ref.contains(key) || ref[key].is_null()) {
      throw BadInput(path + ": not a KernelBench reference: it does not define " +
                     std::string(what));
    }
  }
}

constexpr int kTimingRounds = 5;

json timingJob(const VerifyRequest& request, const std::string& backend) {
  const bool gpu = backend == "cuda";
  // On the CPU 20: four fresh timing sets in each of the five rounds, enough for a round's
  // median on a busy machine; the sets are small at the sizes CPU tasks have.
  const int reps = request.timingReps.value_or(gpu ? 100 : 20);
  return {{"warmup", gpu ? 10 : 2},
          {"reps", reps},
          {"min_time_s", gpu ? 0.5 : 0.2},
          {"check_reps", 3},
          // The reference's and the candidate's timed calls alternate in this many rounds.
          {"rounds", std::min(reps, kTimingRounds)},
          {"compile_baseline", request.compileBaseline},
          {"threads", request.threads}};
}

/// The outside timing check's calls: the worker runs enough for `kCheckMs` by the candidate's
/// own timed median, at most `kMaxCheckReps`, so the parent's 5% allowance for pipe latency and
/// scheduling is a few milliseconds and a time forged below half the truth shows.
constexpr int kMaxCheckReps = 2000;
constexpr double kCheckMs = 250;

ProcessOutcome outcomeOf(const StageResult& stage, double timeoutSeconds) {
  const auto& x = stage.execution;
  ProcessOutcome p;
  p.ran = true;
  p.timedOut = x.timedOut;
  p.memoryExceeded = x.memoryExceeded;
  p.cancelled = x.cancelled;
  p.termSignal = x.termSignal;
  p.exitCode = x.exitCode;
  p.reportedFacts = stage.facts.is_object();
  p.timeoutSeconds = timeoutSeconds;
  p.stderrTail = textTail(x.stderrText, 400);
  return p;
}

/// The seed the reference draws every input from: fresh for each reference run and never in a
/// candidate's job, so no candidate can draw its inputs ahead of the call (the public seed only
/// builds the models).
std::uint64_t secretInputSeed() {
  std::random_device entropy;
  const std::uint64_t high = entropy(), low = entropy();
  return ((high << 32) ^ low) & ((1ULL << 63) - 1);
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void report(const std::function<void(const VerifyProgress&)>& progress, const char* stage,
            const std::string& message) {
  if (progress) progress({stage, message});
}

/// The reference stage: inputs, expected outputs and baseline times in the job's `inputs/` and
/// `ref/`. With a cache, a run of the same reference and settings is copied in instead.
json referenceRun(const VerifyRequest& request, const std::string& backend, const json& timing,
                  const ReferenceJob& job, StageRunner& runner, std::uint64_t ram,
                  const std::function<void(const VerifyProgress&)>& progress,
                  std::vector<StageTime>& times) {
  std::string key;
  if (request.referenceCache) {
    key = ReferenceCache::keyFor(job.source(), {{"backend", backend},
                                                {"opencl_device", request.openclDevice},
                                                {"seed", request.seed},
                                                {"trials", request.trials},
                                                {"timing", timing}});
    const auto started = std::chrono::steady_clock::now();
    if (auto kept = request.referenceCache->restore(key, job.dir().root())) {
      report(progress, "reference", "reusing this reference's earlier run (" + backend + ")");
      times.push_back({"reference (reused)", secondsSince(started)});
      return *kept;
    }
  }
  report(progress, "reference", "running the reference (" + backend + ")");
  json refJob = {{"reference_path", job.referenceFile().string()},
                 {"out_dir", (job / "ref").string()},
                 {"inputs_dir", (job / "inputs").string()},
                 {"backend", backend},
                 {"device", backend == "cuda" ? "cuda" : "cpu"},
                 {"seed", request.seed},
                 {"input_seed", secretInputSeed()},
                 {"trials", request.trials},
                 // One fresh set per timed sample where 256 MiB holds them (reference_stage.py)
                 {"timing_sets", timing.value("reps", 10)},
                 {"timing", timing},
                 {"threads", request.threads},
                 {"alt_batch", true}};
  auto refStage = runner.run("reference", refJob, job / "ref", {(job / "src-ref").string()},
                             {(job / "ref").string(), (job / "inputs").string()},
                             std::max(600.0, request.timeoutSeconds), ram * 3 / 4);
  times.insert(times.end(), refStage.times.begin(), refStage.times.end());
  if (refStage.execution.cancelled) throw std::runtime_error("cancelled");
  if (!refStage.facts.is_object()) {
    std::string why =
        refStage.execution.timedOut ? "it did not finish in time"
        : refStage.execution.memoryExceeded
            ? "it exceeded the memory limit"
            : "its process ended without reporting: " + textTail(refStage.execution.stderrText);
    throw BadInput(request.referencePath + ": the reference could not be run: " + why);
  }
  const json& refError = refStage.facts.value("error", json());
  if (!refError.is_null()) {
    if (refError.value("stage", "") == "infrastructure") {
      throw std::runtime_error("the worker failed running the reference: " +
                               refError.value("message", ""));
    }
    badReference(request.referencePath, refError);
  }
  // Names this run's inputs (they come from a secret seed), so a timer kept on them is reused
  // only with them (openBaseline).
  refStage.facts["inputs_id"] = std::to_string(secretInputSeed());
  if (request.referenceCache) {
    // The walls the candidate will meet keep it out of the job's folders: bubblewrap, or the
    // file and system-call layers the reference stage raised too (the process layer is the
    // candidate's own, applied later).
    const json walls = refStage.facts.value("os_sandbox", json::object());
    const bool walled =
        runner.sandbox().available || (walls.is_object() && walls.value("applied", false));
    request.referenceCache->keep(key, job.dir().root(), refStage.facts, walled);
  }
  return refStage.facts;
}

/// A timing side's stage, answered by `referee` while it runs.
StageHooks turnHooks(TurnReferee& referee, TimingSide side) {
  return {referee.feed(side), [&referee, side](const json& m) { referee.message(side, m); },
          [&referee, side](int group) { referee.started(side, group); },
          [&referee, side] { return referee.heldUp(side); }};
}

/// The reference's timer (the `baseline` stage) for this candidate: a session on the timer kept
/// for this reference, or on a new one. It runs beside the candidate's stage and takes turns
/// with it through `referee`.
std::unique_ptr<BaselineSession> openBaseline(const VerifyRequest& request,
                                              const std::string& backend,
                                              const std::string& tclLibrary, const json& timing,
                                              const json& refFacts, const ReferenceJob& job,
                                              TurnReferee& referee, std::uint64_t memory,
                                              std::stop_token stop) {
  BaselineSpec spec;
  spec.worker = job.worker();
  spec.backend = backend;
  spec.tclLibrary = tclLibrary;
  spec.openclDevice = request.openclDevice;
  spec.referenceSource = job.source();
  spec.inputsDir = job / "inputs";
  spec.memoryBytes = memory;
  spec.job = {{"backend", backend},
              {"seed", request.seed},
              {"timing_sets", refFacts.value("timing_sets", 0)},
              {"timing", timing},
              {"threads", request.threads},
              {"turn_wait_s", request.timeoutSeconds}};
  // A timer is reused only on the timing sets it was started on: the reference run that wrote
  // them is part of the key, so a run of the same reference with fresh inputs starts a new one.
  const json inputsId = refFacts.value("inputs_id", json());
  if (!request.baselineKeeper || !inputsId.is_string()) {
    return BaselineKeeper::openOnce(spec, referee, stop);
  }
  spec.key = ReferenceCache::keyFor(job.source(), {{"job", spec.job},
                                                   {"inputs_id", inputsId},
                                                   {"opencl_device", spec.openclDevice},
                                                   {"tcl", tclLibrary},
                                                   {"memory", memory}});
  return request.baselineKeeper->open(spec, referee, stop);
}

}  // namespace

std::string resolveBackend(const std::string& requested) {
  // auto: real Triton on a GPU; else Crucible's own compiler on an OpenCL device (it runs the
  // whole verification corpus); the Triton interpreter only where neither exists.
  if (requested == "auto") {
    if (gpuVisible()) return "cuda";
    return openclDriverRegistered() && !locateTclLibrary().empty() ? "opencl" : "interpret";
  }
  if (requested == "interpret" || requested == "opencl") return requested;
  if (requested == "cuda") {
    if (!gpuVisible()) throw BadInput("--backend cuda: no NVIDIA GPU is visible on this machine");
    return requested;
  }
  throw BadInput("unknown backend '" + requested + "' (expected auto, interpret, cuda or opencl)");
}

void checkReference(const std::string& referencePath, std::stop_token stop) {
  ReferenceJob job(referencePath, {"static"});
  StageRunner runner(job.worker(), job.dir(), "interpret", "", stop);
  auto staticStage = runner.run("static",
                                {{"reference_path", job.referenceFile().string()},
                                 {"reference_module", fs::path(referencePath).stem().string()}},
                                job / "static", {(job / "src-ref").string()},
                                {(job / "static").string()}, 60, 2 * kGiB);
  if (staticStage.execution.cancelled) throw std::runtime_error("cancelled");
  if (!staticStage.facts.is_object()) {
    throw std::runtime_error("the static analysis worker failed: " +
                             textTail(staticStage.execution.stderrText));
  }
  checkReferenceStatically(referencePath, staticStage.facts.value("reference", json()));
}

namespace {

/// The candidate's code from the request (a file, or a model response's last fenced block that
/// defines ModelNew), kept in the outcome as read.
ExtractedCandidate candidateOf(const VerifyRequest& request, VerifyOutcome& outcome) {
  auto candidateSource =
      request.candidateText ? request.candidateText : readFile(request.candidatePath);
  if (!candidateSource) throw BadInput(request.candidatePath + ": cannot read the file");
  auto extracted = extractCandidate(*candidateSource);
  if (!extracted) {
    throw BadInput(request.candidatePath +
                   ": a model response without a code block that defines ModelNew");
  }
  outcome.candidateSource = *candidateSource;
  outcome.candidateCode = extracted->code;
  outcome.candidateFromResponse = extracted->fromResponse;
  return *extracted;
}

/// Everything one verification's stages share.
struct VerifyRun {
  const VerifyRequest& request;
  const std::function<void(const VerifyProgress&)>& progress;
  std::stop_token stop;
  ReferenceJob& job;
  StageRunner& runner;
  std::string backend;
  std::string tclLibrary;
  fs::path candFile;
  Observations o = {};
  json facts = json::object();  // every stage's raw facts, kept with the evaluation
  std::vector<StageTime> times = {};
};

/// Stage 1: static analysis of both files (no user code runs).
void staticRun(VerifyRun& run) {
  ReferenceJob& job = run.job;
  report(run.progress, "static", "reading the reference and the candidate");
  auto staticStage =
      run.runner.run("static",
                     {{"reference_path", job.referenceFile().string()},
                      {"candidate_path", run.candFile.string()},
                      {"reference_module", fs::path(run.request.referencePath).stem().string()}},
                     job / "static", {(job / "src-ref").string(), (job / "src-cand").string()},
                     {(job / "static").string()}, 60, 2 * kGiB);
  if (!staticStage.facts.is_object()) {
    throw std::runtime_error("the static analysis worker failed: " +
                             textTail(staticStage.execution.stderrText));
  }
  checkReferenceStatically(run.request.referencePath, staticStage.facts.value("reference", json()));
  run.o.staticFacts = staticStage.facts.value("candidate", json::object());
  run.times.insert(run.times.end(), staticStage.times.begin(), staticStage.times.end());
  run.facts["static"] = staticStage.facts;
}

/// Stage 3: the candidate, in its sandbox, without the reference or the expected outputs; and
/// beside it the reference's timer, in turns with the candidate's timed rounds.
void candidateRun(VerifyRun& run, const json& timing, const json& refFacts, std::uint64_t ram) {
  const VerifyRequest& request = run.request;
  ReferenceJob& job = run.job;
  report(run.progress, "candidate", "running the candidate (" + run.backend + ")");
  json candidateTiming = timing;
  candidateTiming["check_reps"] = kMaxCheckReps;
  candidateTiming["check_ms"] = kCheckMs;
  privateInputsCopy(job / "inputs", job / "cand-inputs");
  json candJob = {
      {"candidate_path", run.candFile.string()},
      {"inputs_dir", (job / "cand-inputs").string()},
      {"private_inputs", true},
      {"out_dir", (job / "cand").string()},
      {"backend", run.backend},
      {"device", run.backend == "cuda" ? "cuda" : "cpu"},
      {"seed", request.seed},
      {"trials", request.trials},
      {"timing_sets", refFacts.value("timing_sets", 0)},
      {"threads", request.threads},
      {"alt", fs::exists(job / "inputs" / "inputs_alt.ctp")},
      {"timing", candidateTiming},
      {"allowed_roots",
       {(job / "cand").string(), (job / "cand-inputs").string(), (job / "src-cand").string()}}};
  const std::uint64_t candidateMemory =
      request.memoryLimitBytes.value_or(std::min<std::uint64_t>(8 * kGiB, ram * 6 / 10));
  TurnReferee referee;
  auto baseline = openBaseline(request, run.backend, run.tclLibrary, timing, refFacts, job, referee,
                               ram * 3 / 4, run.stop);
  const StageHooks candidateHooks = turnHooks(referee, TimingSide::Candidate);
  auto candStage = run.runner.run("candidate", candJob, job / "cand", {(job / "src-cand").string()},
                                  {(job / "cand").string(), (job / "cand-inputs").string()},
                                  request.timeoutSeconds, candidateMemory, candidateHooks);
  // A candidate that never asked for a turn (it failed before timing) needs no baseline: told
  // before the candidate's side ends, so the referee never grants the reference's rounds alone.
  if (!referee.candidateAsked()) baseline->abandon();
  referee.finished(TimingSide::Candidate);
  // It waits for the candidate's turns, so it may run as long as the candidate and then its
  // own rounds.
  auto baselineStage = baseline->finish(std::max(600.0, request.timeoutSeconds));
  Observations& o = run.o;
  o.candidateFacts = candStage.facts;
  o.candidateProcess = outcomeOf(candStage, request.timeoutSeconds);
  o.outsideCheckMs = candStage.checkMs;
  o.checkReps = candStage.checkReps;
  o.forgedChannelLines = candStage.forgedLines;
  o.baselineFacts = baselineStage.facts;
  o.turns = referee.log();
  if (o.baselineFacts.is_object() && o.baselineFacts.value("timing", json()).is_object()) {
    o.referenceFacts["timing"] = o.baselineFacts["timing"];
    run.facts["reference"]["timing"] = o.baselineFacts["timing"];
  }
  run.facts["candidate"] = candStage.facts;
  run.facts["candidate_process"] = candStage.execution.toJson();
  run.facts["baseline"] = baselineStage.facts;
  run.facts["turns"] = o.turns;
  run.times.insert(run.times.end(), candStage.times.begin(), candStage.times.end());
  run.times.insert(run.times.end(), baselineStage.times.begin(), baselineStage.times.end());
}

/// Stage 4: the parent reads and compares every output pack.
void compareRun(VerifyRun& run) {
  report(run.progress, "judge", "comparing outputs and judging");
  const auto comparing = std::chrono::steady_clock::now();
  std::vector<StageTime> phases;
  {
    // On every core: kept out of other verifications' timings (device_lock.h).
    SharedDeviceHold hold(deviceLockPrefix(run.backend));
    phases.push_back({"compare/device-lock", secondsSince(comparing)});
    for (auto& p :
         compareOutputs(run.job.dir().root(), run.request.trials, run.request.tolerances, run.o)) {
      phases.push_back(std::move(p));
    }
  }
  run.times.push_back({"compare", secondsSince(comparing)});
  run.times.insert(run.times.end(), phases.begin(), phases.end());
}

bool staticallyValid(const json& staticFacts) {
  return staticFacts.value("syntax_error", json()).is_null() &&
         !staticFacts.value("model_new_line", json()).is_null() &&
         !staticFacts.value("kernels", json::array()).empty();
}

}  // namespace

VerifyOutcome verify(const VerifyRequest& request,
                     const std::function<void(const VerifyProgress&)>& progress,
                     std::stop_token stop) {
  VerifyOutcome outcome;
  if (!findRewardPreset(request.rewardPreset)) {
    throw BadInput("unknown reward preset '" + request.rewardPreset + "'");
  }
  if (request.trials < 1) throw BadInput("--trials must be at least 1");
  ReferenceJob job(request.referencePath,
                   {"src-cand", "inputs", "ref", "cand", "static", "baseline"});
  const ExtractedCandidate extracted = candidateOf(request, outcome);
  outcome.referenceSource = job.source();
  const std::string backend = resolveBackend(request.backend);
  const std::string tclLibrary = tclLibraryFor(backend);
  if (request.keepJobDir) {
    job.dir().keep();
    outcome.jobDir = job.dir().root().string();
  }
  const fs::path candFile = job / "src-cand" / "candidate.py";
  writeFile(candFile, extracted.code);

  StageRunner runner(job.worker(), job.dir(), backend, tclLibrary, stop, request.openclDevice);
  VerifyRun run{request, progress, stop, job, runner, backend, tclLibrary, candFile};
  staticRun(run);
  if (staticallyValid(run.o.staticFacts)) {
    // Stage 2: the reference makes the inputs and the expected outputs (or a kept run of it).
    const std::uint64_t ram = physicalMemory();
    const json timing = timingJob(request, backend);
    const json refFacts =
        referenceRun(request, backend, timing, job, runner, ram, progress, run.times);
    run.o.referenceFacts = refFacts;
    run.facts["reference"] = refFacts;
    candidateRun(run, timing, refFacts, ram);
    compareRun(run);
  }

  Evaluation& e = outcome.evaluation;
  e = judge(run.o, JudgeOptions{request.rewardPreset, request.speedupCeiling});
  e.backend = backend;
  e.plan = extracted.plan;
  e.stageSeconds = std::move(run.times);
  const SandboxSummary sandbox = summarizeSandbox(runner.sandbox(), run.o.candidateFacts);
  e.sandboxed = sandbox.held;
  e.sandboxNote = sandbox.note;
  e.facts = std::move(run.facts);
  const json& refEnv = run.o.referenceFacts.value("env", json::object());
  e.environment = refEnv;
  e.device = refEnv.value("device_name", backend == "cuda" ? "cuda" : "cpu");
  return outcome;
}

}  // namespace crucible
