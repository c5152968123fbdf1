// The model engine's text layer without libtorch: split patterns, UTF-8, stop strings, templates.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/llm/candidate_text.h"
#include "core/llm/chat_template.h"
#include "core/llm/model_error.h"
#include "core/llm/nfc.h"
#include "core/llm/pretokenizer.h"
#include "core/llm/utf8.h"

using namespace crucible::llm;

namespace {
std::vector<std::string> split(const std::string& text, SplitPattern p) {
  std::vector<std::string> out;
  for (auto piece : preTokenize(text, p)) out.emplace_back(piece);
  return out;
}
using Pieces = std::vector<std::string>;
}  // namespace

TEST(ModelPreTokenizer, Llama3GroupsDigitsInThreesAndKeepsTheSpaceBeforeAWord) {
  EXPECT_EQ(split("Hello world 12345", SplitPattern::Llama3),
            (Pieces{"Hello", " world", " ", "123", "45"}));
  EXPECT_EQ(split("Qwen 12345", SplitPattern::Qwen2),
            (Pieces{"Qwen", " ", "1", "2", "3", "4", "5"}));
}

TEST(ModelPreTokenizer, WhitespaceRunsLeaveOneSpaceToTheNextWordAndEndAfterNewlines) {
  EXPECT_EQ(split("a   b", SplitPattern::Llama3), (Pieces{"a", "  ", " b"}));
  EXPECT_EQ(split("a \n\n  b", SplitPattern::Llama3), (Pieces{"a", " \n\n", " ", " b"}));
  EXPECT_EQ(split("x  ", SplitPattern::Llama3), (Pieces{"x", "  "}));
  EXPECT_EQ(split("a   b", SplitPattern::Gpt2), (Pieces{"a", "  ", " b"}));
}

TEST(ModelPreTokenizer, ContractionsAreCaseInsensitiveOnlyInTheLlama3AndQwenPatterns) {
  EXPECT_EQ(split("I'M here", SplitPattern::Llama3), (Pieces{"I", "'M", " here"}));
  EXPECT_EQ(split("I'M", SplitPattern::Gpt2), (Pieces{"I", "'", "M"}));
  EXPECT_EQ(split("don't", SplitPattern::Gpt2), (Pieces{"don", "'t"}));
}

TEST(ModelPreTokenizer, PunctuationTakesOneLeadingSpaceAndTrailingNewlines) {
  EXPECT_EQ(split("f(x);\n\ny", SplitPattern::Llama3), (Pieces{"f", "(x", ");\n\n", "y"}));
  EXPECT_EQ(split("日本語 テキスト", SplitPattern::Qwen2), (Pieces{"日本語", " テキスト"}));
}

TEST(ModelPreTokenizer, KnowsOnlyTheFamiliesRegexes) {
  EXPECT_FALSE(splitPatternFromRegex("\\w+"));
  EXPECT_EQ(splitPatternFromRegex(
                R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"),
            SplitPattern::Gpt2);
}

TEST(ModelUtf8, IncompleteTailCountsOnlyUnfinishedSequences) {
  const std::string euro = "\xE2\x82\xAC";
  EXPECT_EQ(incompleteUtf8Tail("ab" + euro), 0u);
  EXPECT_EQ(incompleteUtf8Tail("ab" + euro.substr(0, 2)), 2u);
  EXPECT_EQ(incompleteUtf8Tail("ab" + euro.substr(0, 1)), 1u);
  const auto cps = decodeUtf8("a\xFF" + euro);
  ASSERT_EQ(cps.size(), 3u);
  EXPECT_EQ(cps[1].cp, 0xFFFDu);  // an invalid byte keeps its one-byte span
  EXPECT_EQ(cps[2].cp, 0x20ACu);
  EXPECT_EQ(cps[2].offset, 2u);
}

TEST(ModelCandidateText, StopStringAcrossTokensIsCutAndNeverStreamed) {
  CandidateText t({"</s>"});
  std::string streamed = t.append("hello <");
  streamed += t.append("/");
  EXPECT_EQ(streamed, "hello ");  // "</" could still become the stop string
  streamed += t.append("s> tail");
  EXPECT_TRUE(t.stopped());
  EXPECT_EQ(t.text(), "hello ");
  EXPECT_EQ(streamed + t.flush(), "hello ");
}

TEST(ModelCandidateText, HeldBackPrefixIsReleasedWhenItStopsMatching) {
  CandidateText t({"STOP"});
  EXPECT_EQ(t.append("a ST"), "a ");
  EXPECT_EQ(t.append("ay"), "STay");
  EXPECT_FALSE(t.stopped());
}

TEST(ModelCandidateText, SplitUtf8SequenceWaitsForItsLastByte) {
  CandidateText t({});
  EXPECT_EQ(t.append("x\xE2\x82"), "x");
  EXPECT_EQ(t.append("\xAC!"), "\xE2\x82\xAC!");
  EXPECT_EQ(t.flush(), "");
}

TEST(ModelChatTemplate, ChatMLAddsQwen25DefaultSystemOnlyWhenTheTemplateHasIt) {
  const auto qwen25 = ChatTemplate::detect(
      "{{'<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
      "assistant.<|im_end|>'}} <|im_start|>");
  EXPECT_EQ(qwen25.render({{"user", "hi"}}),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  const auto plain = ChatTemplate::detect("<|im_start|>");
  EXPECT_EQ(plain.render({{"system", "S"}, {"user", "hi"}}, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n");
}

TEST(ModelChatTemplate, Qwen3DropsEarlierReasoningAndClosesThinkingWhenOff) {
  const auto qwen3 = ChatTemplate::detect("<|im_start|> enable_thinking last_query_index");
  const std::string out = qwen3.render(
      {{"user", "a"}, {"assistant", "<think>\nplan\n</think>\n\nanswer"}, {"user", "b"}}, true,
      false);
  EXPECT_EQ(out,
            "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nanswer<|im_end|>\n"
            "<|im_start|>user\nb<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ModelChatTemplate, DefaultSystemPromptIsReadFromTheTemplateWithEitherNewline) {
  // SmolLM2-135M-Instruct's template as its GGUF stores it (a real newline in the literal).
  const auto smollm2 = ChatTemplate::detect(
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
      "'<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
      "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
      "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}");
  EXPECT_EQ(smollm2.defaultSystem,
            "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
  // Qwen2.5's tools branch writes the system header alone; the default is the later literal.
  const auto qwen25 = ChatTemplate::detect(
      "{{- '<|im_start|>system\\n' }}{{- messages[0]['content'] }} {{- '<|im_start|>system\\n' "
      "+ messages[0]['content'] + '<|im_end|>\\n' }} {{- '<|im_start|>system\\nYou are Qwen, "
      "created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}");
  EXPECT_EQ(qwen25.defaultSystem,
            "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.");
  EXPECT_EQ(smollm2.render({{"system", "S"}, {"user", "hi"}}, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n");
}

TEST(ModelChatTemplate, Qwen3KeepsReasoningAfterTheLastQueryAndThinking2507OpensThink) {
  const auto qwen3 = ChatTemplate::detect("<|im_start|> last_query_index enable_thinking");
  // A continuation: the assistant turn after the last user query keeps its reasoning, with the
  // newlines around it normalised as the template's strip('\n') calls do.
  EXPECT_EQ(
      qwen3.render({{"user", "a"}, {"assistant", "<think>\n\nplan\n</think>\n\n\nans"}}, false),
      "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\n<think>\nplan\n</think>\n\n"
      "ans<|im_end|>\n");
  const auto thinking = ChatTemplate::detect(
      "<|im_start|> last_query_index {{- '<|im_start|>assistant\\n<think>\\n' }}");
  EXPECT_TRUE(thinking.opensThinking);
  EXPECT_EQ(thinking.render({{"user", "a"}}),
            "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST(ModelChatTemplate, Llama31OpensWithTheKnowledgeCutoffSystemTurn) {
  const auto llama31 = ChatTemplate::detect("<|start_header_id|> Cutting Knowledge Date");
  EXPECT_EQ(llama31.render({{"system", " Be brief. "}, {"user", "hi\n"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_THROW(ChatTemplate::detect("{{ messages }}"), ModelError);
}

TEST(ModelNfc, ComposesReordersAndLeavesCompatibilityCharactersAlone) {
  EXPECT_EQ(toNfc("cafe\xCC\x81"), "caf\xC3\xA9");             // e + acute -> é
  EXPECT_EQ(toNfc("\xE2\x84\xAB"), "\xC3\x85");                // Angstrom sign -> Å
  EXPECT_EQ(toNfc("q\xCC\x87\xCC\xA3"), "q\xCC\xA3\xCC\x87");  // marks reordered by class
  EXPECT_EQ(toNfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), "\xEA\xB0\x81");  // Hangul L V T
  EXPECT_EQ(toNfc("\xEF\xAC\x81"), "\xEF\xAC\x81");  // ﬁ is compatibility only
  EXPECT_EQ(toNfc("plain ascii"), "plain ascii");
  EXPECT_EQ(toNfc("a\xFF\xCC\x81"), "a\xFF\xCC\x81");  // an invalid byte blocks
}
