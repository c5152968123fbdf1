#include "core/llm/chat_template.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "core/llm/model_error.h"

namespace crucible::llm {
namespace {
constexpr std::string_view kLlama31Date = "26 Jul 2024";  // the template's default date_string

// Jinja's |trim: Python str.strip() on the usual whitespace.
std::string trim(std::string_view s) {
  const auto ws = " \t\n\r\v\f";
  const auto first = s.find_first_not_of(ws);
  if (first == std::string_view::npos) return {};
  return std::string(s.substr(first, s.find_last_not_of(ws) - first + 1));
}

// The default system prompt a ChatML template writes when the conversation has none: a string
// literal '<|im_start|>system\n...<|im_end|>' with no expression inside (Qwen2.5: "You are Qwen,
// created by Alibaba Cloud. You are a helpful assistant."; SmolLM2: "You are a helpful AI
// assistant named SmolLM, trained by Hugging Face"). The template text has the newline either as
// Jinja's escape \n or as a real newline (tokenizer_config.json vs. a GGUF's copy of it).
std::string defaultSystemPrompt(std::string_view text) {
  constexpr std::string_view open = "<|im_start|>system", close = "<|im_end|>";
  for (auto at = text.find(open); at != std::string_view::npos; at = text.find(open, at + 1)) {
    std::string_view rest = text.substr(at + open.size());
    if (rest.substr(0, 2) == "\\n")
      rest.remove_prefix(2);
    else if (rest.substr(0, 1) == "\n")
      rest.remove_prefix(1);
    else
      continue;
    const auto end = rest.find(close);
    if (end == std::string_view::npos) continue;
    const std::string_view literal = rest.substr(0, end);
    if (literal.empty() || literal.find_first_of("'\"{}+") != std::string_view::npos) continue;
    std::string prompt;
    for (std::size_t i = 0; i < literal.size(); ++i) {
      if (literal[i] == '\\' && i + 1 < literal.size()) {
        const char e = literal[++i];
        prompt += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        prompt += literal[i];
      }
    }
    return prompt;
  }
  return {};
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
std::string stripNewlines(std::string_view s, bool front, bool back) {
  while (front && !s.empty() && s.front() == '\n') s.remove_prefix(1);
  while (back && !s.empty() && s.back() == '\n') s.remove_suffix(1);
  return std::string(s);
}

// Qwen3's assistant turn (its tokenizer_config.json chat_template, Qwen/Qwen3-8B): content with a
// </think> is split into reasoning (between the last <think> and the first </think>) and answer
// (after the last </think>, leading newlines dropped). Turns after the last real user query keep
// their reasoning in a <think> block when they have some or are the last message; earlier turns
// keep only the answer.
std::string qwen3Assistant(const std::string& text, bool afterLastQuery, bool last) {
  std::string content = text, reasoning;
  if (const auto close = text.find("</think>"); close != std::string::npos) {
    const std::string before = stripNewlines(std::string_view(text).substr(0, close), false, true);
    const auto open = before.rfind("<think>");
    reasoning =
        stripNewlines(open == std::string::npos ? before : before.substr(open + 7), true, false);
    content = stripNewlines(std::string_view(text).substr(text.rfind("</think>") + 8), true, false);
  }
  if (afterLastQuery && (last || !reasoning.empty()))
    return "<think>\n" + stripNewlines(reasoning, true, true) + "\n</think>\n\n" +
           stripNewlines(content, true, false);
  return content;
}

// Qwen3's last_query_index: the last user message that is not a <tool_response> wrapper.
std::size_t lastQueryIndex(const std::vector<ChatMessage>& messages) {
  for (std::size_t i = messages.size(); i-- > 0;)
    if (messages[i].role == "user" && !(startsWith(messages[i].content, "<tool_response>") &&
                                        endsWith(messages[i].content, "</tool_response>")))
      return i;
  return messages.empty() ? 0 : messages.size() - 1;
}

std::string renderChatML(const ChatTemplate& t, const std::vector<ChatMessage>& messages,
                         bool addGenerationPrompt, bool enableThinking) {
  std::string out;
  if (!t.defaultSystem.empty() && (messages.empty() || messages.front().role != "system"))
    out += "<|im_start|>system\n" + t.defaultSystem + "<|im_end|>\n";
  const std::size_t lastQuery = lastQueryIndex(messages);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const bool qwen3Turn = t.reasoningTurns && m.role == "assistant";
    out += "<|im_start|>" + m.role + "\n" +
           (qwen3Turn ? qwen3Assistant(m.content, i > lastQuery, i + 1 == messages.size())
                      : m.content) +
           "<|im_end|>\n";
  }
  if (addGenerationPrompt) {
    out += "<|im_start|>assistant\n";
    if (t.thinkingSwitch && !enableThinking) out += "<think>\n\n</think>\n\n";
    if (t.opensThinking) out += "<think>\n";
  }
  return out;
}

// strftime("%d %b %Y") of the local date, as the Llama-3.2 template's strftime_now gives it.
std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%d %b %Y", &local);
  return buffer;
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
    out += header("system") + "Cutting Knowledge Date: December 2023\nToday Date: " +
           (t.todayDate ? today() : std::string(kLlama31Date)) + "\n\n" + system + "<|eot_id|>";
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
    t.defaultSystem = defaultSystemPrompt(text);
    t.thinkingSwitch = text.find("enable_thinking") != std::string_view::npos;
    // Qwen3's templates find the last real user query to decide which turns keep reasoning.
    t.reasoningTurns = text.find("last_query_index") != std::string_view::npos;
    // Qwen3-*-Thinking-2507: the generation prompt opens the <think> block itself.
    t.opensThinking = text.find("'<|im_start|>assistant\\n<think>\\n'") != std::string_view::npos ||
                      text.find("'<|im_start|>assistant\n<think>\n'") != std::string_view::npos;
    return t;
  }
  if (text.find("<|start_header_id|>") != std::string_view::npos) {
    t.format = ChatFormat::Llama3;
    t.knowledgeCutoff = text.find("Cutting Knowledge Date") != std::string_view::npos;
    // Llama-3.2 writes today's date when the renderer has strftime_now (transformers has).
    t.todayDate = text.find("strftime_now") != std::string_view::npos;
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

}  // namespace crucible::llm
