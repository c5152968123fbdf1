#pragma once
// A bench run's report folder, which a later run with the same settings resumes: run.json (the
// settings), results.jsonl (one finished task a line, appended as each finishes; the last line
// of a task wins, and a line cut short by a crash is skipped) and shrunk/ (the shrunk tasks).

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "core/bench/run_settings.h"
#include "core/bench/task_result.h"

namespace crucible::bench {

/// The folder holds a run with other settings; what() names the difference.
class ReportFolderMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ReportFolder {
 public:
  /// Opens (creating) `dir` for a run with `settings` and records them. Unless `fresh`, the rows
  /// of an earlier run with the same settings are read back; a run with other settings throws
  /// ReportFolderMismatch and leaves the folder as it was. File errors throw.
  ReportFolder(std::filesystem::path dir, const RunSettings& settings, bool fresh);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path resultsFile() const { return dir_ / "results.jsonl"; }
  std::filesystem::path shrunkDir() const { return dir_ / "shrunk"; }

  /// The rows read back, by task id, and how many lines could not be read.
  const std::map<std::string, TaskResult>& finished() const { return finished_; }
  int unreadableLines() const { return unreadable_; }
  /// How many of the rows read back are not run again (TaskResult::resumable).
  long resumable() const;

  /// Appends one finished task's row; false when the file cannot be written.
  bool append(const TaskResult& row) const;

 private:
  std::filesystem::path dir_;
  std::map<std::string, TaskResult> finished_;
  int unreadable_ = 0;
};

}  // namespace crucible::bench
