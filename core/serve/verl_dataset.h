#pragma once
// The tasks a trainer learns on, as verl's RL dataset reads them (`crucible tasks export
// --format verl`, docs/RL.md): one row per reference, its prompt rendered from a prompt template,
// the reference as the rule reward's ground truth (crucible_reward scores against it), and its
// level and operators in extra_info. Rows are ordered for a curriculum: fewer operators first
// (DRTriton's), then level and id.

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/bench/task_set.h"

namespace crucible::serve {

struct VerlExportOptions {
  std::string dataSource = "crucible";  // verl's reward routing key
  std::string promptTemplate = "kernelbench";
  std::string backend = "cuda";  // what the prompt says the kernels run on
  double testFraction = 0.1;     // every k-th task (k = 1/fraction) goes to the test split
};

struct VerlDataset {
  std::vector<nlohmann::json> train, test;
};

/// The rows of `tasks` (from `dir`, whose index.json may give each task's `ops`). Throws
/// std::runtime_error naming a task file that cannot be read.
VerlDataset verlRows(const std::filesystem::path& dir, const std::vector<bench::BenchTask>& tasks,
                     const VerlExportOptions& options);

}  // namespace crucible::serve
