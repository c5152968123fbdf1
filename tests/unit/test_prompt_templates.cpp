// Prompt templates: the renderer's syntax and its errors, the built-in templates, the per-model
// choice and the variables a request fills in.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/generate/prompt_library.h"
#include "core/generate/prompt_template.h"
#include "temp_dir.h"

namespace crucible::generate {
namespace {

const std::vector<std::string> kKnown = {"name", "findings", "verified"};

std::string renderUser(const std::string& text, const TemplateVariables& values) {
  const auto prompt = PromptTemplate::parse(text, "t.prompt", kKnown).render(values);
  for (const auto& m : prompt) {
    if (m.role == "user") return m.content;
  }
  return "(no user message)";
}

std::string errorOf(const std::string& text) {
  try {
    PromptTemplate::parse(text, "t.prompt", kKnown);
  } catch (const TemplateError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PromptTemplate, MessagesVariablesAndSections) {
  const std::string text =
      "A description line, not sent.\n"
      "<|system|>\n"
      "You write kernels.\n"
      "<|user|>\n"
      "Optimize {{name}}.\n"
      "{{#findings}}\n"
      "Findings:\n"
      "{{findings}}\n"
      "{{#verified}}\n"
      "Make it faster.\n"
      "{{/verified}}\n"
      "{{^verified}}\n"
      "Fix it.\n"
      "{{/verified}}\n"
      "{{/findings}}\n";
  const auto t = PromptTemplate::parse(text, "t.prompt", kKnown);
  const ChatPrompt first = t.render({{"name", "softmax"}});
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0], (ChatMessage{"system", "You write kernels."}));
  EXPECT_EQ(first[1], (ChatMessage{"user", "Optimize softmax."}));  // sections drop whole lines

  const ChatPrompt fix = t.render({{"name", "softmax"}, {"findings", "2 of 5 trials"}});
  EXPECT_EQ(fix[1].content, "Optimize softmax.\nFindings:\n2 of 5 trials\nFix it.");
  const ChatPrompt faster =
      t.render({{"name", "softmax"}, {"findings", "verified"}, {"verified", "yes"}});
  EXPECT_EQ(faster[1].content, "Optimize softmax.\nFindings:\nverified\nMake it faster.");
  EXPECT_TRUE(t.uses("findings"));
  EXPECT_FALSE(PromptTemplate::parse("<|user|>\nhi\n", "t", kKnown).uses("findings"));
}

TEST(PromptTemplate, InlineSectionsAndTheTextForm) {
  EXPECT_EQ(renderUser("<|user|>\na{{#name}}[{{name}}]{{/name}}b\n", {{"name", "x"}}), "a[x]b");
  EXPECT_EQ(renderUser("<|user|>\na{{#name}}[{{name}}]{{/name}}b\n", {}), "ab");
  const ChatPrompt prompt = {{"system", "s"}, {"user", "u\n"}};
  EXPECT_EQ(promptText(prompt), "<|system|>\ns\n\n<|user|>\nu\n");
}

TEST(PromptTemplate, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(errorOf("no markers at all\n"),
            "t.prompt:1: no message: a template needs a line '<|user|>' before its text");
  EXPECT_EQ(errorOf("<|user|>\nline two\n{{nmae}}\n"),
            "t.prompt:3: unknown variable {{nmae}} (known: name, findings, verified)");
  EXPECT_EQ(errorOf("<|user|>\n{{#findings}}\nnever closed\n"),
            "t.prompt:2: the section {{findings}} is never closed");
  EXPECT_EQ(errorOf("<|user|>\n{{#findings}}{{/name}}\n"),
            "t.prompt:2: {{/name}} closes the section {{#findings}} opened on line 2");
  EXPECT_EQ(errorOf("<|user|>\nx {{name\n}}\n"), "t.prompt:2: '{{' without '}}' on the same line");
  EXPECT_EQ(errorOf("<|tool|>\nx\n"),
            "t.prompt:1: unknown role 'tool' (system, user or assistant)");
  EXPECT_EQ(errorOf("<|system|>\nonly a system message\n"), "t.prompt:1: no <|user|> message");
}

GenerateRequest sampleRequest() {
  GenerateRequest r;
  r.referenceSource = "class Model(nn.Module):\n    pass\n";
  r.referenceName = "12_ReLU";
  return r;
}

TEST(PromptLibrary, BuiltinTemplatesShowTheReferenceAndTheExample) {
  const auto names = builtinPromptTemplateNames();
  ASSERT_EQ(names.size(), 2u);
  for (const auto& name : names) {
    const ChatPrompt p = buildPrompt(builtinPromptTemplate(name), sampleRequest());
    ASSERT_GE(p.size(), 2u) << name;
    const std::string& user = p.back().content;
    EXPECT_NE(user.find("```python\nclass Model(nn.Module):\n    pass\n```"), std::string::npos)
        << name;
    EXPECT_NE(user.find("12_ReLU"), std::string::npos) << name;
    EXPECT_NE(user.find("add_relu_kernel"), std::string::npos) << name;  // the one-shot example
    EXPECT_NE(user.find("ModelNew"), std::string::npos) << name;
    EXPECT_EQ(user.find("previous version"), std::string::npos) << name;  // not a refinement
    EXPECT_EQ(user.find("{{"), std::string::npos) << name;
  }
  const std::string reasoning =
      buildPrompt(builtinPromptTemplate("reasoning"), sampleRequest()).back().content;
  EXPECT_NE(reasoning.find("<think>"), std::string::npos);
  EXPECT_THROW(builtinPromptTemplate("nonexistent"), TemplateError);
}

TEST(PromptLibrary, RefinementCarriesTheFindingsAndAsksForTheRightThing) {
  GenerateRequest r = sampleRequest();
  r.refinement =
      Refinement{"class ModelNew: old\n", "Verdict: incorrect\nTrial 0: 3 differ", false};
  for (const auto& name : builtinPromptTemplateNames()) {
    const PromptTemplate t = builtinPromptTemplate(name);
    EXPECT_TRUE(t.uses("findings")) << name;
    const std::string fix = buildPrompt(t, r).back().content;
    EXPECT_NE(fix.find("Verdict: incorrect\nTrial 0: 3 differ"), std::string::npos) << name;
    EXPECT_NE(fix.find("```python\nclass ModelNew: old\n```"), std::string::npos) << name;
    EXPECT_TRUE(fix.find("Fix it") != std::string::npos ||
                fix.find("Plan a fix") != std::string::npos)
        << name;
    EXPECT_EQ(fix.find("faster version"), std::string::npos) << name;
    r.refinement->verified = true;
    EXPECT_NE(buildPrompt(t, r).back().content.find("faster version"), std::string::npos) << name;
    r.refinement->verified = false;
  }
}

TEST(PromptLibrary, ModelsGetTheirTemplate) {
  EXPECT_EQ(promptTemplateNameFor("TritonRL-8B"), "reasoning");
  EXPECT_EQ(promptTemplateNameFor("Qwen/Qwen3-8B"), "reasoning");
  EXPECT_EQ(promptTemplateNameFor("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"), "reasoning");
  EXPECT_EQ(promptTemplateNameFor("meta-llama/Llama-3.1-8B-Instruct"), "kernelbench");
  EXPECT_EQ(promptTemplateNameFor(""), "kernelbench");
}

TEST(PromptLibrary, AUserFileIsCheckedAgainstTheKnownVariables) {
  const crucible::test::TempDir temp("prompt");
  const auto& dir = temp.path();
  const auto good = dir / "mine.prompt";
  std::ofstream(good) << "<|user|>\nPort {{reference_name}}:\n{{reference}}\n";
  const ChatPrompt p = buildPrompt(loadPromptTemplate(good.string()), sampleRequest());
  EXPECT_EQ(p.at(0).content, "Port 12_ReLU:\nclass Model(nn.Module):\n    pass");
  const auto bad = dir / "bad.prompt";
  std::ofstream(bad) << "<|user|>\n{{referense}}\n";
  try {
    loadPromptTemplate(bad.string());
    FAIL() << "a misspelt variable was accepted";
  } catch (const TemplateError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad.string() + ":2: unknown variable {{referense}}", 0),
              0u)
        << e.what();
  }
  EXPECT_THROW(loadPromptTemplate((dir / "missing.prompt").string()), TemplateError);
}

}  // namespace
}  // namespace crucible::generate
