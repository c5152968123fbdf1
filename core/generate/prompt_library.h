#pragma once
// The prompt templates Crucible ships (resources/prompts, compiled in), the per-model choice
// among them, the user's own template files, and the variables a request fills in.

#include <string>
#include <string_view>
#include <vector>

#include "core/generate/chat_prompt.h"
#include "core/generate/generator.h"
#include "core/generate/prompt_template.h"

namespace crucible::generate {

/// The variables a template may use (resources/prompts/README.md).
const std::vector<std::string>& promptVariableNames();

/// The names of the built-in templates ("kernelbench", "reasoning").
std::vector<std::string> builtinPromptTemplateNames();

/// A built-in template; TemplateError when there is none of that name.
PromptTemplate builtinPromptTemplate(std::string_view name);

/// The built-in template a model gets (resources/prompts/models.json): the first rule whose
/// `match` is a case-insensitive substring of `modelId`, else the default.
std::string promptTemplateNameFor(std::string_view modelId);

/// Reads a template file; TemplateError naming the file (and line) when it cannot be used.
PromptTemplate loadPromptTemplate(const std::string& path);

/// The values a request gives the template's variables.
TemplateVariables promptVariables(const GenerateRequest& request);

/// The prompt for a request: the template rendered with promptVariables(request).
ChatPrompt buildPrompt(const PromptTemplate& promptTemplate, const GenerateRequest& request);

}  // namespace crucible::generate
