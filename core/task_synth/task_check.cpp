#include "core/task_synth/task_check.h"

#include <cmath>
#include <fstream>
#include <optional>

#include "core/proc/process.h"
#include "core/util/locations.h"
#include "core/verify/channel_auth.h"
#include "core/verify/compare.h"
#include "core/verify/value_pack.h"

namespace crucible::task_synth {

namespace fs = std::filesystem;
using nlohmann::json;

void to_json(json& j, const CheckResult& r) {
  j = {{"accepted", r.accepted}, {"kind", r.kind}, {"reason", r.reason}, {"ms", r.ms}};
}

namespace {

CheckResult reject(std::string kind, std::string reason) {
  return CheckResult{false, std::move(kind), std::move(reason), 0};
}

/// Judges one task's saved outputs: finite everywhere, and no degeneracy gate per output.
CheckResult judgeOutputs(const json& fact, const fs::path& outDir, int trials) {
  if (!fact.value("error", json()).is_null()) {
    const auto& error = fact["error"];
    std::string where = error.contains("line") && error["line"].is_number_integer()
                            ? " (line " + std::to_string(error["line"].get<int>()) + ")"
                            : "";
    return reject("error", error.value("message", std::string("failed")) + where);
  }
  const ToleranceTable tolerances;
  const auto outputs = fact.value("outputs", json::array());
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    std::vector<ValuePack> packs;
    for (int k = 0; k < trials; ++k) {
      const fs::path path = outDir / ("out" + std::to_string(j) + "_" + std::to_string(k) + ".ctp");
      try {
        packs.push_back(ValuePack::load(path.string()));
      } catch (const ValuePackError& e) {
        return reject("error", std::string("output not readable: ") + e.what());
      }
    }
    for (const auto& pack : packs) {
      for (const auto& t : pack.tensors()) {
        if (!isFloating(t.dtype())) continue;
        for (std::size_t i = 0; i < t.numel(); ++i) {
          if (!std::isfinite(t.at(i))) {
            return reject("nonfinite", "output " + std::to_string(j) + " holds NaN or Inf");
          }
        }
      }
    }
    std::vector<const ValuePack*> trialsOf;
    for (const auto& pack : packs) trialsOf.push_back(&pack);
    const Degeneracy d = assessDegeneracy(trialsOf, tolerances);
    if (d.degenerate) return reject("degenerate", "output " + std::to_string(j) + ": " + d.reason);
  }
  CheckResult ok;
  ok.accepted = true;
  ok.ms = fact.value("ms", json()).is_number() ? fact["ms"].get<double>() : 0;
  return ok;
}

std::map<std::string, std::string> environmentFor(const fs::path& scratch) {
  std::map<std::string, std::string> env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                            {"HOME", scratch.string()},
                                            {"LANG", "C.UTF-8"},
                                            {"PYTHONDONTWRITEBYTECODE", "1"},
                                            {"PYTHONUNBUFFERED", "1"},
                                            {"CRUCIBLE_RESULT_FD", "3"},
                                            {"CRUCIBLE_CHANNEL_KEY", "stdin"},
                                            {"OMP_NUM_THREADS", "1"}};
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) env["LD_LIBRARY_PATH"] = ld;
  return env;
}

}  // namespace

std::vector<CheckResult> checkTasks(const std::vector<fs::path>& files, const fs::path& scratch,
                                    const CheckOptions& options, std::stop_token stop) {
  if (files.empty()) return {};
  const WorkerLocation worker = locateWorker();
  if (!worker.problem.empty()) throw CheckInfrastructureError(worker.problem);
  fs::create_directories(scratch);
  json job = {{"seed", options.seed},
              {"trials", options.trials},
              {"threads", options.threads},
              {"tasks", json::array()}};
  std::vector<fs::path> outDirs;
  for (std::size_t i = 0; i < files.size(); ++i) {
    outDirs.push_back(scratch / ("outputs-" + std::to_string(i)));
    fs::remove_all(outDirs.back());  // a previous batch's packs must not be read as this one's
    job["tasks"].push_back({{"path", files[i].string()}, {"out_dir", outDirs.back().string()}});
  }
  const fs::path jobFile = scratch / "synthcheck-job.json";
  {
    std::ofstream out(jobFile);
    out << job.dump(1);
    if (!out) throw CheckInfrastructureError("cannot write " + jobFile.string());
  }

  // The sandbox binds canonical paths, so the interpreter is named through its folder's real
  // path (a .venv that is a symlink to another checkout's stays a venv: its python is not
  // resolved itself, which would leave the venv).
  std::error_code ec;
  const fs::path binDir = fs::canonical(fs::path(worker.python).parent_path(), ec);
  const fs::path python =
      ec ? fs::path(worker.python) : binDir / fs::path(worker.python).filename();
  proc::ProcessSpec spec;
  spec.argv = {python.string(), "-I", "-B", worker.workerScript, "synthcheck", jobFile.string()};
  spec.env = environmentFor(scratch);
  const std::string key = makeChannelKey();
  spec.stdinText = key + "\n";
  spec.workingDir = scratch.string();
  spec.limits.wallTimeout = std::chrono::milliseconds(
      static_cast<long long>((10 + options.secondsPerTask * files.size()) * 1000));
  const auto sandbox = proc::probeSandbox();
  spec.sandbox.enabled = sandbox.available;
  spec.sandbox.readOnlyPaths = {python.parent_path().parent_path().string(),
                                fs::path(worker.workerScript).parent_path().string()};
  for (const auto& f : files) spec.sandbox.readOnlyPaths.push_back(f.string());
  spec.sandbox.writablePaths = {scratch.string()};

  const proc::ExecutionResult run = proc::run(spec, stop);
  if (run.cancelled || stop.stop_requested()) throw CheckInfrastructureError("cancelled");
  std::optional<json> facts;
  for (const auto& line : run.channel) {
    const auto message = openChannelLine(line.text, key);
    if (message && message->value("type", "") == "facts") facts = message->value("facts", json());
  }
  if (!run.exitedCleanly() || !facts || !facts->contains("tasks") ||
      (*facts)["tasks"].size() != files.size()) {
    std::string why = run.timedOut ? "timed out" : "exit code " + std::to_string(run.exitCode);
    if (facts && facts->contains("error")) why = (*facts)["error"].value("message", why);
    throw CheckInfrastructureError("the worker's synthcheck stage failed (" + why +
                                   "): " + run.stderrText.substr(0, 600));
  }
  std::vector<CheckResult> results;
  for (std::size_t i = 0; i < files.size(); ++i) {
    results.push_back(judgeOutputs((*facts)["tasks"][i], outDirs[i], options.trials));
  }
  return results;
}

}  // namespace crucible::task_synth
