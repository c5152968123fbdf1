#include "core/verify/reward.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "core/verify/reward_expression.h"

namespace crucible {

// Generated from resources/rewards/*.json by cmake/embed_presets.cmake.
const std::vector<std::string_view>& builtinRewardPresetSources();

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The evaluation's variables, in the order of their slots.
constexpr std::array<std::string_view, 5> kVariables = {"syntax", "functionality", "compiled",
                                                        "correct", "speedup"};
constexpr std::size_t kSpeedupSlot = 4;

// parse() evaluates every preset at each combination of the four 0/1 flags and these speedups, so
// an unguarded log(speedup) or x / speedup fails when the preset is loaded.
constexpr std::array<double, 10> kProbeSpeedups = {0, 1e-3, 0.25, 0.5, 1, 1.5, 2, 3, 10, 1e6};

std::string formatNumber(double value) {
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%g", value);
  return buffer.data();
}

std::string inQuotes(std::string_view text) {
  return "'" + std::string(text) + "'";
}

bool isIdentifier(std::string_view text) {
  if (text.empty()) return false;
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!start(text[0])) return false;
  return std::all_of(text.begin() + 1, text.end(),
                     [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

bool isPresetName(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

bool isReserved(std::string_view name) {
  const auto& functions = RewardExpression::functionNames();
  return std::find(kVariables.begin(), kVariables.end(), name) != kVariables.end() ||
         std::find(functions.begin(), functions.end(), name) != functions.end();
}

std::array<double, 5> inputValues(const RewardInputs& inputs) {
  return {inputs.syntax, inputs.functionality, inputs.compiled, inputs.correct, inputs.speedup};
}

std::string describeInputs(const RewardInputs& inputs) {
  const auto values = inputValues(inputs);
  std::string text;
  for (std::size_t i = 0; i < kVariables.size(); ++i) {
    if (i) text += ' ';
    text += std::string(kVariables[i]) + "=" + formatNumber(values[i]);
  }
  return text;
}

void checkKeys(const ordered_json& object, std::initializer_list<std::string_view> allowed,
               const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (std::string_view name : allowed) list += (list.empty() ? "" : ", ") + std::string(name);
      throw std::invalid_argument(where + ": unknown key " + inQuotes(key) + " (allowed: " + list +
                                  ")");
    }
  }
}

std::string requireString(const ordered_json& object, const char* key, const std::string& where) {
  if (!object.contains(key)) throw std::invalid_argument(where + ": missing " + inQuotes(key));
  if (!object[key].is_string()) {
    throw std::invalid_argument(where + ": " + inQuotes(key) + " must be a string");
  }
  return object[key].get<std::string>();
}

/// Everything evaluate() needs, built once by parse() and shared by copies of the preset.
struct CompiledPreset {
  std::string preset;
  std::vector<std::string> names, parts;
  std::vector<RewardExpression> expressions;
  RewardExpression total;
  std::vector<double> initialSlots;  // variables (zero), then params, then components (zero)
  std::size_t firstComponentSlot = 0;

  Reward evaluate(const RewardInputs& inputs) const {
    std::vector<double> slots = initialSlots;
    const auto values = inputValues(inputs);
    std::copy(values.begin(), values.end(), slots.begin());
    Reward reward;
    reward.preset = preset;
    reward.components.reserve(expressions.size());
    for (std::size_t i = 0; i < expressions.size(); ++i) {
      double value = 0;
      try {
        value = expressions[i].evaluate(slots);
      } catch (const ExpressionDomainError& e) {
        throw std::domain_error("preset " + inQuotes(preset) + ", component " + inQuotes(names[i]) +
                                ": " + e.what());
      }
      slots[firstComponentSlot + i] = value;
      reward.components.push_back({names[i], value, parts[i]});
    }
    try {
      reward.total = total.evaluate(slots);
    } catch (const ExpressionDomainError& e) {
      throw std::domain_error("preset " + inQuotes(preset) + ", total: " + e.what());
    }
    return reward;
  }
};

}  // namespace

struct RewardPreset::Compiled : CompiledPreset {};

namespace {

/// A component as the preset's text gives it.
struct ComponentText {
  std::string name, expression, part;
};

/// Compiles one preset's params, components and total in order, each expression against the
/// names visible at its place, with messages that say where.
class PresetCompiler {
 public:
  PresetCompiler(std::string where, std::shared_ptr<CompiledPreset> compiled)
      : where_(std::move(where)), compiled_(std::move(compiled)) {
    for (std::size_t i = 0; i < kVariables.size(); ++i) visible_.emplace_back(kVariables[i], i);
    compiled_->initialSlots.assign(kVariables.size(), 0.0);
  }

  /// The params (an object of numbers), in order; what the preset keeps of them.
  std::vector<std::pair<std::string, double>> addParams(const ordered_json& j) {
    std::vector<std::pair<std::string, double>> params;
    if (j.contains("params")) {
      const ordered_json& given = j["params"];
      if (!given.is_object()) {
        throw std::invalid_argument(where_ + ": 'params' must be an object of numbers");
      }
      for (const auto& [key, value] : given.items()) {
        checkNewName(key, "param");
        if (!value.is_number() || !std::isfinite(value.get<double>())) {
          throw std::invalid_argument(where_ + ", param " + inQuotes(key) + ": must be a number");
        }
        params.emplace_back(key, value.get<double>());
        define(key, value.get<double>());
      }
    }
    compiled_->firstComponentSlot = compiled_->initialSlots.size();
    return params;
  }

  /// The components, in order: each may use the variables, the params and the components
  /// before it.
  std::vector<ComponentText> addComponents(const ordered_json& j) {
    if (!j.contains("components") || !j["components"].is_array()) {
      throw std::invalid_argument(where_ + ": 'components' must be an array");
    }
    for (const auto& component : j["components"]) {
      if (component.is_object() && component.contains("name") && component["name"].is_string()) {
        later_.push_back(component["name"].get<std::string>());
      }
    }
    std::vector<ComponentText> specs;
    for (const auto& component : j["components"]) specs.push_back(addComponent(component));
    return specs;
  }

  void setTotal(const std::string& text) { compiled_->total = compile(text, "total"); }

  /// A preset that is undefined somewhere in the input domain fails now, not during a run.
  void probeDomain() const {
    for (unsigned flags = 0; flags < 16; ++flags) {
      for (double speedup : kProbeSpeedups) {
        RewardInputs probe;
        probe.syntax = flags & 1u ? 1 : 0;
        probe.functionality = flags & 2u ? 1 : 0;
        probe.compiled = flags & 4u ? 1 : 0;
        probe.correct = flags & 8u ? 1 : 0;
        probe.speedup = speedup;
        try {
          compiled_->evaluate(probe);
        } catch (const std::domain_error& e) {
          throw std::invalid_argument(std::string(e.what()) + ", for " + describeInputs(probe) +
                                      "; guard it with if(condition, value, fallback)");
        }
      }
    }
  }

 private:
  ComponentText addComponent(const ordered_json& component) {
    if (!component.is_object()) {
      throw std::invalid_argument(where_ + ": each component must be an object");
    }
    const std::string name = requireString(component, "name", where_ + ", a component");
    const std::string context = "component " + inQuotes(name);
    checkKeys(component, {"name", "expr", "part"}, where_ + ", " + context);
    checkNewName(name, "component");
    const std::string expression = requireString(component, "expr", where_ + ", " + context);
    std::string part;
    if (component.contains("part")) {
      part = requireString(component, "part", where_ + ", " + context);
      if (!isIdentifier(part)) {
        throw std::invalid_argument(where_ + ", " + context + ": part " + inQuotes(part) +
                                    " must be a name such as 'plan' or 'code'");
      }
    }
    compiled_->expressions.push_back(compile(expression, context));
    compiled_->names.push_back(name);
    compiled_->parts.push_back(part);
    define(name, 0.0);
    later_.erase(std::find(later_.begin(), later_.end(), name));
    return {name, expression, part};
  }

  void define(const std::string& name, double initial) {
    visible_.emplace_back(name, compiled_->initialSlots.size());
    compiled_->initialSlots.push_back(initial);
  }

  bool isVisible(std::string_view name) const {
    return std::any_of(visible_.begin(), visible_.end(),
                       [&](const auto& entry) { return entry.first == name; });
  }

  void checkNewName(const std::string& name, const std::string& what) const {
    if (!isIdentifier(name)) {
      throw std::invalid_argument(where_ + ", " + what + " " + inQuotes(name) +
                                  ": a name is a letter or '_' followed by letters, digits, '_'");
    }
    if (isReserved(name)) {
      throw std::invalid_argument(where_ + ", " + what + " " + inQuotes(name) +
                                  ": the name is a variable or function of the language");
    }
    if (isVisible(name)) {
      throw std::invalid_argument(where_ + ", " + what + " " + inQuotes(name) +
                                  ": the name is already defined");
    }
  }

  /// One expression against the names visible now.
  RewardExpression compile(const std::string& text, const std::string& context) const {
    try {
      return RewardExpression::parse(text,
                                     [&](std::string_view name) -> std::optional<std::size_t> {
                                       for (const auto& [visibleName, slot] : visible_) {
                                         if (visibleName == name) return slot;
                                       }
                                       return std::nullopt;
                                     });
    } catch (const ExpressionSyntaxError& e) {
      throw std::invalid_argument(where_ + ", " + context + ": " + e.what() + hintFor(e.what()));
    }
  }

  /// For an unknown name: that components see only those before them, or the names known.
  std::string hintFor(std::string_view what) const {
    if (!what.starts_with("unknown identifier '")) return "";
    const auto nameEnd = what.find('\'', 20);
    const std::string name(what.substr(20, nameEnd - 20));
    if (std::find(later_.begin(), later_.end(), name) != later_.end()) {
      return " (a component can use only the components defined before it)";
    }
    std::string names;
    for (const auto& entry : visible_) names += (names.empty() ? "" : ", ") + entry.first;
    return " (known here: " + names + ")";
  }

  std::string where_;
  std::shared_ptr<CompiledPreset> compiled_;
  // Names visible to the next expression, with their slots: variables, params, then components
  // as they are defined.
  std::vector<std::pair<std::string, std::size_t>> visible_;
  std::vector<std::string> later_;  // components not yet defined, for a better message
};

}  // namespace

RewardPreset RewardPreset::parse(std::string_view jsonText) {
  ordered_json j;
  try {
    j = ordered_json::parse(jsonText);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(std::string("reward preset: invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("reward preset: expected a JSON object");

  RewardPreset preset;
  preset.name_ = requireString(j, "name", "reward preset");
  if (!isPresetName(preset.name_)) {
    throw std::invalid_argument("reward preset " + inQuotes(preset.name_) +
                                ": a name is letters, digits, '_', '-' and '.'");
  }
  const std::string where = "preset " + inQuotes(preset.name_);
  checkKeys(j, {"name", "description", "params", "components", "total"}, where);
  if (j.contains("description")) preset.description_ = requireString(j, "description", where);
  preset.total_ = requireString(j, "total", where);

  auto compiled = std::make_shared<Compiled>();
  compiled->preset = preset.name_;
  PresetCompiler compiler(where, compiled);
  preset.params_ = compiler.addParams(j);
  for (auto& c : compiler.addComponents(j)) {
    preset.components_.push_back({std::move(c.name), std::move(c.expression), std::move(c.part)});
  }
  compiler.setTotal(preset.total_);
  compiler.probeDomain();
  preset.compiled_ = std::move(compiled);
  return preset;
}

Reward RewardPreset::evaluate(const RewardInputs& inputs) const {
  if (!compiled_) throw std::logic_error("evaluating a reward preset that was never parsed");
  const auto values = inputValues(inputs);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double value = values[i];
    if (i == kSpeedupSlot) {
      if (!std::isfinite(value) || value < 0) {
        throw std::invalid_argument("reward inputs: speedup must be finite and >= 0, got " +
                                    formatNumber(value));
      }
    } else if (value != 0 && value != 1) {
      throw std::invalid_argument("reward inputs: " + std::string(kVariables[i]) +
                                  " must be 0 or 1, got " + formatNumber(value));
    }
  }
  Reward reward = compiled_->evaluate(inputs);
  reward.inputs = inputs;
  return reward;
}

const std::vector<std::string>& rewardInputNames() {
  static const std::vector<std::string> names(kVariables.begin(), kVariables.end());
  return names;
}

std::vector<std::pair<std::string, double>> rewardInputValues(const RewardInputs& inputs) {
  const auto values = inputValues(inputs);
  std::vector<std::pair<std::string, double>> named;
  for (std::size_t i = 0; i < kVariables.size(); ++i)
    named.emplace_back(std::string(kVariables[i]), values[i]);
  return named;
}

std::optional<Reward> rescoreReward(const Reward& reward, const RewardPreset& preset) {
  if (!reward.inputs) return std::nullopt;
  Reward again = preset.evaluate(*reward.inputs);
  if (!reward.total) again.total.reset();
  return again;
}

const std::vector<RewardPreset>& builtinRewardPresets() {
  static const std::vector<RewardPreset> presets = [] {
    std::vector<RewardPreset> parsed;
    for (std::string_view source : builtinRewardPresetSources()) {
      try {
        parsed.push_back(RewardPreset::parse(source));
      } catch (const std::invalid_argument& e) {
        throw std::logic_error(std::string("built-in reward preset: ") + e.what());
      }
    }
    std::sort(parsed.begin(), parsed.end(),
              [](const RewardPreset& a, const RewardPreset& b) { return a.name() < b.name(); });
    for (std::size_t i = 1; i < parsed.size(); ++i) {
      if (parsed[i].name() == parsed[i - 1].name()) {
        throw std::logic_error("two built-in reward presets are named " +
                               inQuotes(parsed[i].name()));
      }
    }
    return parsed;
  }();
  return presets;
}

const RewardPreset* findRewardPreset(std::string_view name) {
  for (const RewardPreset& preset : builtinRewardPresets()) {
    if (preset.name() == name) return &preset;
  }
  return nullptr;
}

// JSON: {"preset": "tritonrl", "total": 1.2 | null,
//        "components": {"valid": 1, "r_correct": 1, "r_speed": 2},
//        "order": ["valid", "r_correct", "r_speed"],
//        "parts": {"code": ["r_correct"], "plan": ["r_speed"]},
//        "inputs": {"syntax": 1, "functionality": 1, "compiled": 1, "correct": 1, "speedup": 2.3}}
// `components` is keyed by name for consumers; `order` keeps the preset's order (JSON objects do
// not) and `parts` says which token subset each hierarchical component credits; `inputs` (when
// kept) are what the components were computed from.
void to_json(json& j, const Reward& reward) {
  json components = json::object();
  json order = json::array();
  json parts = json::object();
  for (const RewardComponent& component : reward.components) {
    components[component.name] = component.value;
    order.push_back(component.name);
    if (!component.part.empty()) parts[component.part].push_back(component.name);
  }
  j = json{{"preset", reward.preset},
           {"total", reward.total ? json(*reward.total) : json(nullptr)},
           {"components", std::move(components)},
           {"order", std::move(order)},
           {"parts", std::move(parts)}};
  if (reward.inputs) {
    json inputs = json::object();
    for (const auto& [name, value] : rewardInputValues(*reward.inputs)) inputs[name] = value;
    j["inputs"] = std::move(inputs);
  }
}

void from_json(const json& j, Reward& reward) {
  auto fail = [](const std::string& message) -> void {
    throw std::invalid_argument("reward JSON: " + message);
  };
  if (!j.is_object()) fail("expected an object");
  Reward result;
  if (!j.contains("preset") || !j["preset"].is_string()) fail("'preset' must be a string");
  result.preset = j["preset"].get<std::string>();
  if (j.contains("total") && !j["total"].is_null()) {
    if (!j["total"].is_number()) fail("'total' must be a number or null");
    result.total = j["total"].get<double>();
  }

  const json components = j.value("components", json::object());
  if (!components.is_object()) fail("'components' must be an object of numbers");
  for (const auto& [name, value] : components.items()) {
    if (!value.is_number()) fail("component " + inQuotes(name) + " must be a number");
  }
  std::vector<std::string> order;
  if (j.contains("order")) {
    if (!j["order"].is_array()) fail("'order' must be an array of component names");
    for (const json& name : j["order"]) {
      if (!name.is_string() || !components.contains(name.get<std::string>())) {
        fail("'order' names " + name.dump() + ", which is not in 'components'");
      }
      if (std::find(order.begin(), order.end(), name.get<std::string>()) != order.end()) {
        fail("'order' names " + name.dump() + " twice");
      }
      order.push_back(name.get<std::string>());
    }
    if (order.size() != components.size()) fail("'order' must name every component");
  } else {
    for (const auto& [name, value] : components.items()) order.push_back(name);
  }
  for (const std::string& name : order) {
    result.components.push_back({name, components[name].get<double>(), ""});
  }

  if (j.contains("parts")) {
    const json& parts = j["parts"];
    if (!parts.is_object()) fail("'parts' must be an object of arrays of component names");
    for (const auto& [part, names] : parts.items()) {
      if (!names.is_array())
        fail("part " + inQuotes(part) + " must be an array of component names");
      for (const json& name : names) {
        auto it = std::find_if(result.components.begin(), result.components.end(),
                               [&](const RewardComponent& c) {
                                 return name.is_string() && c.name == name.get<std::string>();
                               });
        if (it == result.components.end()) {
          fail("part " + inQuotes(part) + " names " + name.dump() + ", which is not a component");
        }
        if (!it->part.empty()) fail("component " + inQuotes(it->name) + " is in two parts");
        it->part = part;
      }
    }
  }
  if (j.contains("inputs") && !j["inputs"].is_null()) {
    const json& inputs = j["inputs"];
    if (!inputs.is_object()) fail("'inputs' must be an object of numbers");
    std::array<double, kVariables.size()> values{};
    for (std::size_t i = 0; i < kVariables.size(); ++i) {
      const std::string name(kVariables[i]);
      if (!inputs.contains(name) || !inputs[name].is_number()) {
        fail("input " + inQuotes(name) + " must be a number");
      }
      values[i] = inputs[name].get<double>();
    }
    result.inputs = RewardInputs{values[0], values[1], values[2], values[3], values[4]};
  }
  reward = std::move(result);
}

}  // namespace crucible
