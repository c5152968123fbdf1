#include "core/generate/chat_prompt.h"

namespace crucible::generate {

std::string promptText(const ChatPrompt& prompt) {
  std::string text;
  for (const ChatMessage& m : prompt) {
    if (!text.empty()) text += "\n";
    text += "<|" + m.role + "|>\n" + m.content;
    if (m.content.empty() || m.content.back() != '\n') text += "\n";
  }
  return text;
}

}  // namespace crucible::generate
