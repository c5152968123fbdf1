#include <gtest/gtest.h>

#include "core/verify/extract.h"

namespace crucible {
namespace {

TEST(Extract, PlainPythonIsTakenAsIs) {
  auto c = extractCandidate("import torch\nclass ModelNew: pass\n");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->fromResponse);
  EXPECT_EQ(c->code, "import torch\nclass ModelNew: pass\n");
  EXPECT_EQ(c->plan, "");
}

TEST(Extract, LastBlockDefiningModelNewWinsAndPlanIsKept) {
  const std::string response =
      "<think>fuse the add</think>\nPlan: one kernel.\n"
      "```python\nclass ModelNew: first\n```\n"
      "Better:\n```python\nclass ModelNew: second\n```\n"
      "```\nprint('usage example')\n```\n";
  auto c = extractCandidate(response);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->fromResponse);
  EXPECT_EQ(c->code, "class ModelNew: second\n");
  EXPECT_NE(c->plan.find("fuse the add"), std::string::npos);
  EXPECT_NE(c->plan.find("Better:"), std::string::npos);
  EXPECT_EQ(c->plan.find("<think>"), std::string::npos);
  EXPECT_EQ(c->firstCodeLine, 8);
}

TEST(Extract, ResponseWithoutModelNewIsRejected) {
  EXPECT_FALSE(extractCandidate("Here you go:\n```python\nprint(1)\n```\n"));
}

TEST(Extract, UnterminatedFenceTakesTheRest) {
  auto c = extractCandidate("text\n```python\nclass ModelNew:\n  pass\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->code, "class ModelNew:\n  pass\n");
}

TEST(Extract, UnfencedAnswerAfterAThinkBlockKeepsThePlanApart) {
  auto c = extractCandidate(
      "<think>\none program per row\n</think>\n\nimport triton\nclass ModelNew: pass\n");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->fromResponse);
  EXPECT_EQ(c->plan, "one program per row");
  EXPECT_EQ(c->code, "import triton\nclass ModelNew: pass\n");
  EXPECT_EQ(c->firstCodeLine, 5);
}

}  // namespace
}  // namespace crucible
