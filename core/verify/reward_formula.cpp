#include "core/verify/reward_formula.h"

#include <cctype>
#include <cstdio>

namespace crucible {

std::string formulaNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

std::string substituteValues(const std::string& expression,
                             const std::map<std::string, double>& values) {
  std::string out;
  std::size_t i = 0;
  const auto isStart = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
  };
  const auto isPart = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  while (i < expression.size()) {
    const char c = expression[i];
    // A number's exponent ("1e3") is not an identifier.
    const bool afterDigit = i > 0 && (std::isdigit(static_cast<unsigned char>(expression[i - 1])) ||
                                      expression[i - 1] == '.');
    if (isStart(c) && !afterDigit) {
      std::size_t end = i + 1;
      while (end < expression.size() && isPart(expression[end])) ++end;
      const std::string name = expression.substr(i, end - i);
      const auto it = values.find(name);
      out += it == values.end() ? name : formulaNumber(it->second);
      i = end;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

std::vector<RewardFormulaLine> rewardFormula(const RewardPreset& preset, const Reward& reward) {
  std::map<std::string, double> values;
  for (const auto& [name, value] : preset.params()) values[name] = value;
  if (reward.inputs) {
    for (const auto& [name, value] : rewardInputValues(*reward.inputs)) values[name] = value;
  }
  std::vector<RewardFormulaLine> lines;
  for (const auto& spec : preset.components()) {
    RewardFormulaLine line{spec.name, spec.expression, "", "", spec.part};
    // The inputs' values are known only when kept; otherwise the expression is shown as written.
    if (reward.inputs) line.substituted = substituteValues(spec.expression, values);
    for (const RewardComponent& c : reward.components) {
      if (c.name == spec.name) {
        line.value = formulaNumber(c.value);
        values[c.name] = c.value;
      }
    }
    lines.push_back(std::move(line));
  }
  RewardFormulaLine total{"total", preset.totalExpression(), "", "", ""};
  total.substituted = substituteValues(preset.totalExpression(), values);
  total.value = reward.total ? formulaNumber(*reward.total) : "n/a";
  lines.push_back(std::move(total));
  return lines;
}

}  // namespace crucible
