#pragma once
// The tasks the service hands a trainer (GET /tasks/next): a task folder's references in
// curriculum order (fewer operators first), round and round, or fresh ones from
// `crucible tasks synth` (DRTriton's CSP-DAG synthesis), a batch at a time with a new seed each.

#include <cstddef>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <vector>

namespace crucible::serve {

struct TaskSourceOptions {
  std::string dir;      // a task folder; "" = none
  int synthOps = 0;     // > 0: synthesize tasks of this many operators (when no folder)
  int synthBatch = 8;   // tasks per synthesis
  std::string program;  // the crucible binary (its `tasks synth`)
  std::string scratch;  // where synthesized batches are written
};

class TaskSource {
 public:
  /// Reads the folder now; throws std::runtime_error naming it when it has no tasks.
  explicit TaskSource(TaskSourceOptions options);

  /// The next task: task_id, name, level, ops, reference_code and origin (folder | synth).
  /// RequestError: 404 when the service hands out no tasks, 503 when synthesis failed.
  nlohmann::json next(std::stop_token stop = {});
  /// What /health says of it.
  nlohmann::json describe() const;

 private:
  void synthesize(std::stop_token stop);
  TaskSourceOptions options_;
  mutable std::mutex mutex_;
  std::vector<nlohmann::json> folder_;  // in curriculum order
  std::size_t cursor_ = 0;
  std::deque<nlohmann::json> fresh_;  // synthesized, not handed out yet
  unsigned seed_ = 0;
  std::size_t handedOut_ = 0;
};

/// The tasks of `dir` in curriculum order, each {task_id, name, level, ops, reference_code}.
std::vector<nlohmann::json> curriculumTasks(const std::string& dir);

}  // namespace crucible::serve
