// Chat prompt formats, rendered directly rather than through a Jinja engine. The format is
// detected from the model's chat_template text:
//   ChatML (Qwen2/2.5/3, SmolLM2): <|im_start|>role\ncontent<|im_end|>\n ...
//     <|im_start|>assistant\n. A default system prompt written as a literal in the template
//     (Qwen2.5's, SmolLM2's) is added when the conversation has none; Qwen3 (a template that
//     knows enable_thinking) adds an empty <think></think> block when thinking is off and keeps
//     only the answer of assistant turns before the last user query; Qwen3-Thinking-2507 opens
//     <think> in the generation prompt.
//   Llama-3 / 3.1: <|begin_of_text|><|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
//     Llama-3.1 always opens with a system turn carrying its knowledge-cutoff lines (Llama-3.2:
//     with today's date).
// The rendered text holds the special tokens; encode it without the post-processor's BOS.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace crucible::llm {

struct ChatMessage {
  std::string role;  // system, user, assistant
  std::string content;
};
void to_json(nlohmann::json& j, const ChatMessage& m);
void from_json(const nlohmann::json& j, ChatMessage& m);

enum class ChatFormat { ChatML, Llama3 };

struct ChatTemplate {
  ChatFormat format = ChatFormat::ChatML;
  std::string defaultSystem;     // ChatML: the template's default system prompt, else empty
  bool thinkingSwitch = false;   // ChatML: Qwen3's enable_thinking
  bool reasoningTurns = false;   // ChatML: Qwen3's handling of <think> in assistant turns
  bool opensThinking = false;    // ChatML: the generation prompt ends "<think>\n" (Thinking-2507)
  bool knowledgeCutoff = false;  // Llama-3.1's system preamble
  bool todayDate = false;        // Llama-3.2: today's date instead of 3.1's fixed 26 Jul 2024
  std::string bos = "<|begin_of_text|>";

  // Throws ModelError when the template is neither format.
  static ChatTemplate detect(std::string_view templateText);
  std::string_view formatName() const;

  std::string render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt = true,
                     bool enableThinking = true) const;
};

}  // namespace crucible::llm
