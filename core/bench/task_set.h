#pragma once
// The tasks of a benchmark folder: the bundled corpus or a `tasks synth` output (an index.json
// with {"file", "name", "level"} entries), a KernelBench checkout's KernelBench/ folder (level1/,
// level2/, ... of .py files) or a plain folder of .py files.

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace crucible::bench {

/// A folder or index that cannot be used; what() names the file and what is wrong.
class TaskSetError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct BenchTask {
  std::string id;              // the file's path in the folder without ".py": "level1/12_ReLU"
  std::string file;            // the path in the folder: "level1/12_ReLU.py"
  std::string name;            // the stem without its number: "ReLU"
  std::string level;           // "1", "synth", ...; "" when the folder does not say
  int problemId = 0;           // the number the file name starts with; 0 when none
  std::filesystem::path path;  // absolute
  bool operator==(const BenchTask&) const = default;
};

/// The tasks of `dir`, in index order (index.json) or by level then number then name. `levels`
/// keeps only those levels ("1", "2", ...; empty: all). Throws TaskSetError.
std::vector<BenchTask> listTasks(const std::filesystem::path& dir,
                                 const std::vector<std::string>& levels = {});

/// "1,2" or "1 2" -> {"1", "2"}; "level1" is read as "1".
std::vector<std::string> parseLevels(const std::string& text);

}  // namespace crucible::bench
