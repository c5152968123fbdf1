// crucible's chat rendering (no Jinja) against the real templates of Qwen2.5, Qwen3,
// Qwen3-Thinking-2507, Llama-3.1 and SmolLM2 (tests/llm/chat_templates/, sources in its README)
// rendered by transformers' Jinja renderer at test time (make_chat_fixtures.py).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/llm/chat_template.h"

using namespace crucible::llm;

namespace {
nlohmann::json fixtures() {
  const char* dir = std::getenv("CRUCIBLE_MODEL_FIXTURES");
  std::ifstream in(std::filesystem::path(dir ? dir : "") / "chat" / "expected.json");
  return nlohmann::json::parse(in);
}
}  // namespace

TEST(ChatTemplates, RealTemplatesRenderAsTheirJinja) {
  const auto all = fixtures();
  ASSERT_GE(all.at("cases").size(), 50u);
  for (const auto& c : all.at("cases")) {
    const std::string name = c.at("template");
    SCOPED_TRACE(name + " " + c.at("messages").dump());
    const ChatTemplate t = ChatTemplate::detect(all.at("templates").at(name).get<std::string>());
    const auto messages = c.at("messages").get<std::vector<ChatMessage>>();
    EXPECT_EQ(t.render(messages, c.at("add_generation_prompt"), c.at("enable_thinking")),
              c.at("text").get<std::string>());
  }
}

TEST(ChatTemplates, EachFamilyIsDetectedAsItsFormat) {
  const auto all = fixtures();
  const auto detect = [&](const char* name) {
    return ChatTemplate::detect(all.at("templates").at(name).get<std::string>());
  };
  EXPECT_EQ(detect("llama3.1.jinja").format, ChatFormat::Llama3);
  EXPECT_TRUE(detect("llama3.1.jinja").knowledgeCutoff);
  EXPECT_EQ(detect("qwen25.jinja").defaultSystem,
            "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.");
  EXPECT_TRUE(detect("qwen3.jinja").thinkingSwitch);
  EXPECT_FALSE(detect("qwen3.jinja").opensThinking);
  EXPECT_TRUE(detect("qwen3-thinking-2507.jinja").opensThinking);
  EXPECT_EQ(detect("smollm2.jinja").defaultSystem,
            "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
}
