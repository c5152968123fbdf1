#pragma once
// What a benchmark run was asked to do. Written into its report folder (run.json) so a rerun can
// tell whether the rows there are comparable: a run is resumed only with the same settings.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace crucible::bench {

struct RunSettings {
  std::string taskDir;  // as given
  std::vector<std::string> levels;
  std::string model = "synth";
  std::string backend;  // resolved: interpret | opencl | cuda
  int samples = 1;
  int trials = 5;
  int seed = 42;
  bool compileBaseline = true;
  std::optional<double> shrink;
  bool operator==(const RunSettings&) const = default;

  /// The settings that make two runs' rows incomparable when they differ, in words ("backend
  /// opencl, not cuda"); empty when a run with `other` may resume this one.
  std::string differenceFrom(const RunSettings& other) const;
};

void to_json(nlohmann::json& j, const RunSettings& settings);
void from_json(const nlohmann::json& j, RunSettings& settings);

}  // namespace crucible::bench
