#include "core/serve/task_source.h"

#include <filesystem>
#include <random>
#include <stdexcept>

#include "core/bench/task_set.h"
#include "core/proc/process.h"
#include "core/serve/eval_request.h"
#include "core/serve/verl_dataset.h"

namespace crucible::serve {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> curriculumTasks(const std::string& dir) {
  const auto tasks = bench::listTasks(dir);
  VerlExportOptions options;
  options.testFraction = 0;
  std::vector<json> out;
  for (const json& row : verlRows(dir, tasks, options).train) {
    const json& info = row["extra_info"];
    out.push_back({{"task_id", info["task"]},
                   {"name", info["name"]},
                   {"level", info["level"]},
                   {"ops", info["ops"]},
                   {"reference_code", row["reward_model"]["ground_truth"]}});
  }
  return out;
}

TaskSource::TaskSource(TaskSourceOptions options) : options_(std::move(options)) {
  if (!options_.dir.empty()) {
    folder_ = curriculumTasks(options_.dir);
    if (folder_.empty()) throw std::runtime_error(options_.dir + ": no tasks");
  }
  seed_ = std::random_device{}() % 1000000;  // fresh tasks after a restart too
}

void TaskSource::synthesize(std::stop_token stop) {
  const fs::path out = fs::path(options_.scratch) / ("synth-" + std::to_string(seed_));
  fs::remove_all(out);
  proc::ProcessSpec spec;
  spec.argv = {options_.program,
               "tasks",
               "synth",
               "--ops",
               std::to_string(options_.synthOps),
               "--count",
               std::to_string(options_.synthBatch),
               "--seed",
               std::to_string(seed_),
               "--out",
               out.string()};
  for (const char* name : {"PATH", "HOME", "TMPDIR", "CRUCIBLE_PYTHON", "CRUCIBLE_WORKER_DIR"}) {
    if (const char* value = std::getenv(name)) spec.env[name] = value;
  }
  spec.resultChannel = false;
  spec.limits.wallTimeout = std::chrono::minutes(10);
  const proc::ExecutionResult r = proc::run(spec, stop);
  ++seed_;
  std::vector<json> made;
  if (r.exitedCleanly()) made = curriculumTasks(out.string());
  if (made.empty()) {
    const std::string said = r.stderrText.size() > 400 ? r.stderrText.substr(0, 400) : r.stderrText;
    throw RequestError(503, "crucible tasks synth made no tasks: " + said);
  }
  for (json& task : made) {
    task["task_id"] =
        "synth-" + std::to_string(seed_ - 1) + "/" + task["task_id"].get<std::string>();
    task["origin"] = "synth";
    fresh_.push_back(std::move(task));
  }
}

json TaskSource::next(std::stop_token stop) {
  std::lock_guard lock(mutex_);
  if (!folder_.empty()) {
    json task = folder_[cursor_ % folder_.size()];
    ++cursor_;
    ++handedOut_;
    task["origin"] = "folder";
    return task;
  }
  if (options_.synthOps <= 0) {
    throw RequestError(404,
                       "this service hands out no tasks (start it with --tasks DIR or "
                       "--synth-ops N)");
  }
  if (fresh_.empty()) synthesize(stop);
  json task = std::move(fresh_.front());
  fresh_.pop_front();
  ++handedOut_;
  return task;
}

json TaskSource::describe() const {
  std::lock_guard lock(mutex_);
  return json{{"folder", options_.dir},
              {"folder_tasks", folder_.size()},
              {"synth_ops", options_.synthOps},
              {"handed_out", handedOut_}};
}

}  // namespace crucible::serve
