#include "core/model/chat_template.h"

#include <nlohmann/json.hpp>

#include "core/model/model_error.h"

namespace crucible::model {
namespace {
constexpr std::string_view kQwenSystem =
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
constexpr std::string_view kLlama31Date = "26 Jul 2024";  // the template's default date_string

// Jinja's |trim: Python str.strip() on the usual whitespace.
std::string trim(std::string_view s) {
  const auto ws = " \t\n\r\v\f";
  const auto first = s.find_first_not_of(ws);
  if (first == std::string_view::npos) return {};
  return std::string(s.substr(first, s.find_last_not_of(ws) - first + 1));
}

// Qwen3 keeps only the answer of earlier assistant turns: the text after the last </think>,
// without its leading newlines.
std::string dropReasoning(const std::string& content) {
  const auto end = content.rfind("</think>");
  if (end == std::string::npos) return content;
  const auto answer = content.find_first_not_of('\n', end + 8);
  return answer == std::string::npos ? std::string() : content.substr(answer);
}

std::string renderChatML(const ChatTemplate& t, const std::vector<ChatMessage>& messages,
                         bool addGenerationPrompt, bool enableThinking) {
  std::string out;
  if (!t.defaultSystem.empty() && (messages.empty() || messages.front().role != "system"))
    out += "<|im_start|>system\n" + t.defaultSystem + "<|im_end|>\n";
  std::size_t lastUser = messages.size();
  for (std::size_t i = messages.size(); i-- > 0;)
    if (messages[i].role == "user") {
      lastUser = i;
      break;
    }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const bool earlierAnswer = t.thinkingSwitch && m.role == "assistant" && i < lastUser;
    out += "<|im_start|>" + m.role + "\n" + (earlierAnswer ? dropReasoning(m.content) : m.content) +
           "<|im_end|>\n";
  }
  if (addGenerationPrompt) {
    out += "<|im_start|>assistant\n";
    if (t.thinkingSwitch && !enableThinking) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

std::string header(const std::string& role) {
  return "<|start_header_id|>" + role + "<|end_header_id|>\n\n";
}

std::string renderLlama3(const ChatTemplate& t, const std::vector<ChatMessage>& messages,
                         bool addGenerationPrompt) {
  std::string out = t.bos;
  std::size_t first = 0;
  if (t.knowledgeCutoff) {
    std::string system;
    if (!messages.empty() && messages.front().role == "system") {
      system = trim(messages.front().content);
      first = 1;
    }
    out += header("system") +
           "Cutting Knowledge Date: December 2023\nToday Date: " + std::string(kLlama31Date) +
           "\n\n" + system + "<|eot_id|>";
  }
  for (std::size_t i = first; i < messages.size(); ++i)
    out += header(messages[i].role) + trim(messages[i].content) + "<|eot_id|>";
  if (addGenerationPrompt) out += header("assistant");
  return out;
}
}  // namespace

void to_json(nlohmann::json& j, const ChatMessage& m) {
  j = {{"role", m.role}, {"content", m.content}};
}
void from_json(const nlohmann::json& j, ChatMessage& m) {
  m.role = j.at("role").get<std::string>();
  m.content = j.at("content").get<std::string>();
}

ChatTemplate ChatTemplate::detect(std::string_view text) {
  ChatTemplate t;
  if (text.find("<|im_start|>") != std::string_view::npos) {
    t.format = ChatFormat::ChatML;
    if (text.find(kQwenSystem) != std::string_view::npos) t.defaultSystem = kQwenSystem;
    t.thinkingSwitch = text.find("enable_thinking") != std::string_view::npos;
    return t;
  }
  if (text.find("<|start_header_id|>") != std::string_view::npos) {
    t.format = ChatFormat::Llama3;
    t.knowledgeCutoff = text.find("Cutting Knowledge Date") != std::string_view::npos;
    return t;
  }
  throw ModelError(
      "chat template is neither ChatML (<|im_start|>) nor Llama-3 (<|start_header_id|>)");
}

std::string_view ChatTemplate::formatName() const {
  return format == ChatFormat::ChatML ? "chatml" : "llama3";
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt,
                                 bool enableThinking) const {
  if (format == ChatFormat::ChatML)
    return renderChatML(*this, messages, addGenerationPrompt, enableThinking);
  return renderLlama3(*this, messages, addGenerationPrompt);
}

}  // namespace crucible::model
