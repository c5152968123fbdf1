// Chat prompt formats, rendered directly rather than through a Jinja engine. The format is
// detected from the model's chat_template text:
//   ChatML (Qwen2/2.5/3): <|im_start|>role\ncontent<|im_end|>\n ... <|im_start|>assistant\n
//     Qwen2.5 adds its default system prompt when none is given; Qwen3 (a template that knows
//     enable_thinking) adds an empty <think></think> block when thinking is off and drops the
//     reasoning of assistant turns before the last user turn.
//   Llama-3 / 3.1: <|begin_of_text|><|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
//     Llama-3.1 always opens with a system turn carrying its knowledge-cutoff lines.
// The rendered text holds the special tokens; encode it without the post-processor's BOS.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace crucible::model {

struct ChatMessage {
  std::string role;  // system, user, assistant
  std::string content;
};
void to_json(nlohmann::json& j, const ChatMessage& m);
void from_json(const nlohmann::json& j, ChatMessage& m);

enum class ChatFormat { ChatML, Llama3 };

struct ChatTemplate {
  ChatFormat format = ChatFormat::ChatML;
  std::string defaultSystem;     // ChatML: Qwen2.5's default system prompt, else empty
  bool thinkingSwitch = false;   // ChatML: Qwen3's enable_thinking
  bool knowledgeCutoff = false;  // Llama-3.1's system preamble
  std::string bos = "<|begin_of_text|>";

  // Throws ModelError when the template is neither format.
  static ChatTemplate detect(std::string_view templateText);
  std::string_view formatName() const;

  std::string render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt = true,
                     bool enableThinking = true) const;
};

}  // namespace crucible::model
