#pragma once
// Prompt templates are data (resources/prompts/*.prompt), editable by the user (--prompt FILE).
// A template is a chat: lines before the first role marker describe it and are dropped; each
// role marker on a line of its own ("<|system|>", "<|user|>", "<|assistant|>") starts a message.
//
// Inside a message, a tiny subset of Mustache:
//   {{name}}              the variable's text
//   {{#name}}...{{/name}}  the part, only when the variable is not empty
//   {{^name}}...{{/name}}  the part, only when the variable is empty
// A section tag alone on its line takes the line with it. Names are checked when the template
// is read, so a typo is an error naming the file and line, not a silent blank.

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/generate/chat_prompt.h"

namespace crucible::generate {

/// A template that cannot be read; what() is "FILE:LINE: why".
class TemplateError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

using TemplateVariables = std::map<std::string, std::string, std::less<>>;

class PromptTemplate {
 public:
  /// Parses `text`; `source` names it in errors (a path, or "builtin:kernelbench"). Every
  /// variable used must be in `knownVariables`. Throws TemplateError.
  static PromptTemplate parse(std::string_view text, std::string source,
                              const std::vector<std::string>& knownVariables);

  /// The messages with the variables filled in; a variable not in `values` is empty.
  ChatPrompt render(const TemplateVariables& values) const;

  /// True when the template uses `name` anywhere (as a value or a section).
  bool uses(std::string_view name) const;
  const std::string& source() const { return source_; }

  struct Node;  // defined in prompt_template.cpp

 private:
  struct Message {
    std::string role;
    std::vector<std::shared_ptr<const Node>> body;
  };
  std::string source_;
  std::vector<Message> messages_;
  std::vector<std::string> used_;
};

}  // namespace crucible::generate
