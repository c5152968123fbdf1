#pragma once
// A chat prompt: the messages a language model is given. Its text form, stored with each
// candidate, is the prompt templates' own format (prompt_template.h): a role marker on its own
// line ("<|system|>", "<|user|>", "<|assistant|>") before each message.

#include <string>
#include <vector>

namespace crucible::generate {

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
  bool operator==(const ChatMessage&) const = default;
};

using ChatPrompt = std::vector<ChatMessage>;

/// "<|system|>\n...\n\n<|user|>\n...\n".
std::string promptText(const ChatPrompt& prompt);

}  // namespace crucible::generate
