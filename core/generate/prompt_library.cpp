#include "core/generate/prompt_library.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/util/locations.h"

namespace crucible {
// Generated from resources/prompts by cmake/embed_files.cmake.
const std::vector<std::pair<std::string_view, std::string_view>>& builtinPromptFiles();
}  // namespace crucible

namespace crucible::generate {

namespace {

constexpr std::string_view kExtension = ".prompt";

std::string_view builtinFile(std::string_view name) {
  for (const auto& [file, text] : builtinPromptFiles()) {
    if (file == name) return text;
  }
  throw TemplateError("builtin:" + std::string(name) + ": missing from this build");
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const std::vector<std::string>& promptVariableNames() {
  static const std::vector<std::string> names = {
      "reference", "reference_name", "example_reference", "example_candidate",
      "round",     "findings",       "previous_code",     "verified"};
  return names;
}

std::vector<std::string> builtinPromptTemplateNames() {
  std::vector<std::string> names;
  for (const auto& [file, text] : builtinPromptFiles()) {
    if (file.size() > kExtension.size() && file.ends_with(kExtension)) {
      names.emplace_back(file.substr(0, file.size() - kExtension.size()));
    }
  }
  return names;
}

PromptTemplate builtinPromptTemplate(std::string_view name) {
  const auto names = builtinPromptTemplateNames();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw TemplateError("no built-in prompt template '" + std::string(name) + "' (" + list + ")");
  }
  const std::string file = std::string(name) + std::string(kExtension);
  return PromptTemplate::parse(builtinFile(file), "builtin:" + file, promptVariableNames());
}

std::string promptTemplateNameFor(std::string_view modelId) {
  static const nlohmann::json choice = nlohmann::json::parse(builtinFile("models.json"));
  const std::string id = lower(modelId);
  for (const auto& rule : choice.at("rules")) {
    if (id.find(lower(rule.at("match").get<std::string>())) != std::string::npos) {
      return rule.at("template").get<std::string>();
    }
  }
  return choice.at("default").get<std::string>();
}

PromptTemplate loadPromptTemplate(const std::string& path) {
  const auto text = readFile(path);
  if (!text) throw TemplateError(path + ": cannot read the prompt template");
  return PromptTemplate::parse(*text, path, promptVariableNames());
}

TemplateVariables promptVariables(const GenerateRequest& request) {
  TemplateVariables values = {
      {"reference", request.referenceSource},
      {"reference_name", request.referenceName},
      {"example_reference", std::string(builtinFile("oneshot_reference.py"))},
      {"example_candidate", std::string(builtinFile("oneshot_candidate.py"))},
      {"round", std::to_string(request.round)},
  };
  if (request.refinement) {
    values["findings"] = request.refinement->findings;
    values["previous_code"] = request.refinement->previousCode;
    values["verified"] = request.refinement->verified ? "yes" : "";
  }
  // Code inside the template's fences reads better without its final newline.
  for (auto& [name, value] : values) {
    while (!value.empty() && value.back() == '\n') value.pop_back();
  }
  return values;
}

ChatPrompt buildPrompt(const PromptTemplate& promptTemplate, const GenerateRequest& request) {
  return promptTemplate.render(promptVariables(request));
}

}  // namespace crucible::generate
