#pragma once
// Reward presets are data (resources/rewards/*.json): named components, each an expression over
// the evaluation's variables and earlier components, and a total. Nothing here knows a preset.

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crucible {

/// What a reward may depend on. All are 0/1 except speedup.
struct RewardInputs {
  double syntax = 0;         // parses and defines at least one @triton.jit kernel
  double functionality = 0;  // a kernel is launched and no cheat flag was raised
  double compiled = 0;       // imported, constructed and ran without an exception
  double correct = 0;        // every correctness trial matched
  double speedup = 0;        // reference / candidate time; 0 when not correct or not timed
  bool operator==(const RewardInputs&) const = default;
};

struct RewardComponent {
  std::string name;
  double value = 0;
  std::string
      part;  // "" or, for hierarchical presets, the token subset it credits ("plan", "code")
  bool operator==(const RewardComponent&) const = default;
};

struct Reward {
  std::string preset;
  std::optional<double> total;  // nullopt when the evaluation failed for infrastructure reasons
  std::vector<RewardComponent> components;
  // What it was computed from, so that another preset can score the same evaluation again
  // (absent in evaluations stored before the inputs were kept).
  std::optional<RewardInputs> inputs;
  bool operator==(const Reward&) const = default;
};

/// The names of the inputs' variables as expressions use them, in RewardInputs' order.
const std::vector<std::string>& rewardInputNames();
/// The inputs' values by those names.
std::vector<std::pair<std::string, double>> rewardInputValues(const RewardInputs& inputs);

void to_json(nlohmann::json& j, const Reward& reward);
void from_json(const nlohmann::json& j, Reward& reward);

/// A parsed preset.
class RewardPreset {
 public:
  /// Parses a preset from its JSON text; throws std::invalid_argument with a clear message.
  static RewardPreset parse(std::string_view jsonText);

  struct ComponentSpec {
    std::string name, expression, part;
  };

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  /// The preset as written: its parameters, its components' expressions, the total's.
  const std::vector<std::pair<std::string, double>>& params() const { return params_; }
  const std::vector<ComponentSpec>& components() const { return components_; }
  const std::string& totalExpression() const { return total_; }
  /// Always gives a total. Throws std::invalid_argument when an input is outside its domain
  /// (a flag not 0 or 1, speedup negative or not finite) and std::domain_error when an
  /// expression is undefined for these inputs (parse() already rejects a preset that fails for
  /// any flag combination at speedups from 0 to 1e6). Built-in presets never throw on valid
  /// inputs.
  Reward evaluate(const RewardInputs& inputs) const;

 private:
  std::string name_, description_, total_;
  std::vector<std::pair<std::string, double>> params_;
  std::vector<ComponentSpec> components_;
  struct Compiled;  // the parsed expressions, shared by copies (reward.cpp)
  std::shared_ptr<const Compiled> compiled_;
};

/// The presets compiled into the binary (tritonrl, drtriton, kevin, kernelgym).
const std::vector<RewardPreset>& builtinRewardPresets();
/// The named built-in preset, or nullptr.
const RewardPreset* findRewardPreset(std::string_view name);

/// `reward` scored again under `preset` from the inputs it keeps (an evaluation that failed for
/// the infrastructure's reasons keeps no total); nullopt when it keeps none.
std::optional<Reward> rescoreReward(const Reward& reward, const RewardPreset& preset);

}  // namespace crucible
