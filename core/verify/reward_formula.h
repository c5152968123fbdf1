#pragma once
// A reward as its preset's formulas with the candidate's numbers in them, for people:
// "total = alpha * r_speed + r_correct = 0.1 * 2 + 1 = 1.2".

#include <map>
#include <string>
#include <vector>

#include "core/verify/reward.h"

namespace crucible {

struct RewardFormulaLine {
  std::string name;         // a component's name, or "total"
  std::string expression;   // as the preset writes it
  std::string substituted;  // the expression with every known name replaced by its value
  std::string value;        // the result as shown
  std::string part;         // the token subset it credits ("" for the whole response)
};

/// `expression` with each identifier that `values` names replaced by its value (numbers with
/// the digits they carry); function names and unknown identifiers stay.
std::string substituteValues(const std::string& expression,
                             const std::map<std::string, double>& values);

/// One line per component and one for the total. The inputs come from the reward itself; a
/// reward that keeps none shows the formulas with the components' values only.
std::vector<RewardFormulaLine> rewardFormula(const RewardPreset& preset, const Reward& reward);

/// A number as the formulas show it: "1", "0.1", "2.35", "1.2e+03".
std::string formulaNumber(double value);

}  // namespace crucible
