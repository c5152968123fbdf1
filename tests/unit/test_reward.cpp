#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/verify/reward.h"
#include "core/verify/reward_expression.h"

namespace crucible {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// --- helpers ---------------------------------------------------------------------------------

RewardInputs inputs(double syntax, double functionality, double compiled, double correct,
                    double speedup) {
  RewardInputs in;
  in.syntax = syntax;
  in.functionality = functionality;
  in.compiled = compiled;
  in.correct = correct;
  in.speedup = speedup;
  return in;
}
// An honest kernel that compiled and matched, at the given speedup.
RewardInputs correctAt(double speedup) {
  return inputs(1, 1, 1, 1, speedup);
}
// An honest kernel that ran but did not match.
RewardInputs incorrect() {
  return inputs(1, 1, 1, 0, 0);
}
// A kernel that matched but was flagged (functionality 0: cheat flag or no kernel launched).
RewardInputs cheating(double speedup) {
  return inputs(1, 0, 1, 1, speedup);
}

const RewardPreset& preset(std::string_view name) {
  const RewardPreset* found = findRewardPreset(name);
  if (!found) throw std::runtime_error("no built-in preset " + std::string(name));
  return *found;
}

double component(const Reward& reward, std::string_view name) {
  for (const auto& c : reward.components) {
    if (c.name == name) return c.value;
  }
  throw std::runtime_error("no component " + std::string(name));
}

std::vector<std::string> names(const Reward& reward) {
  std::vector<std::string> out;
  for (const auto& c : reward.components) out.push_back(c.name);
  return out;
}

double total(const RewardPreset& p, const RewardInputs& in) {
  return p.evaluate(in).total.value();
}

// The message of the std::invalid_argument that parsing `text` throws ("" when it parses).
std::string parseError(const std::string& text) {
  try {
    RewardPreset::parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// A one-component preset named "x" whose component "y" is `expr`.
std::string presetWith(const std::string& expr, const std::string& total = "y") {
  return R"({"name": "x", "params": {"k": 2}, "components": [{"name": "y", "expr": ")" + expr +
         R"("}], "total": ")" + total + R"("})";
}

double evalExpr(std::string_view text, std::vector<double> slots = {}) {
  auto expression = RewardExpression::parse(text, [](std::string_view name) {
    if (name == "a") return std::optional<std::size_t>(0);
    if (name == "b") return std::optional<std::size_t>(1);
    return std::optional<std::size_t>();
  });
  return expression.evaluate(slots);
}

std::string exprError(std::string_view text) {
  try {
    evalExpr(text, {0, 0});
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// --- built-in presets ------------------------------------------------------------------------

TEST(RewardBuiltins, AllFourAreCompiledInAndFindable) {
  std::vector<std::string> presetNames;
  for (const auto& p : builtinRewardPresets()) {
    presetNames.push_back(p.name());
    EXPECT_FALSE(p.description().empty()) << p.name();
  }
  EXPECT_THAT(presetNames, ElementsAre("drtriton", "kernelgym", "kevin", "tritonrl"));
  EXPECT_NE(findRewardPreset("tritonrl"), nullptr);
  EXPECT_EQ(findRewardPreset("tritonrl")->name(), "tritonrl");
  EXPECT_EQ(findRewardPreset("nope"), nullptr);
  EXPECT_EQ(&builtinRewardPresets(), &builtinRewardPresets());
}

TEST(RewardBuiltins, EveryResourceFileParsesAndIsNamedAfterItsFile) {
  const auto dir = std::filesystem::path(CRUCIBLE_TEST_DATA_DIR) / ".." / "resources" / "rewards";
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    std::ifstream file(entry.path());
    std::stringstream text;
    text << file.rdbuf();
    RewardPreset parsed;
    ASSERT_NO_THROW(parsed = RewardPreset::parse(text.str())) << entry.path();
    EXPECT_EQ(parsed.name(), entry.path().stem().string());
    EXPECT_NE(findRewardPreset(parsed.name()), nullptr) << "not embedded: " << parsed.name();
  }
  EXPECT_EQ(count, builtinRewardPresets().size());
}

TEST(RewardBuiltins, ThreadSafeFirstUse) {
  std::vector<std::thread> threads;
  std::vector<const void*> seen(8);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = &builtinRewardPresets(); });
  }
  for (auto& t : threads) t.join();
  for (const void* p : seen) EXPECT_EQ(p, &builtinRewardPresets());
}

// tritonrl: valid = syntax x functionality; r_correct = valid x correct (code tokens);
// r_speed = valid x correct x min(speedup, 2) (plan tokens); total = 0.1 x r_speed + r_correct.
TEST(RewardTritonRL, CorrectAndFast) {
  const Reward r = preset("tritonrl").evaluate(correctAt(1.5));
  EXPECT_EQ(r.preset, "tritonrl");
  EXPECT_THAT(names(r), ElementsAre("valid", "r_correct", "r_speed"));
  EXPECT_DOUBLE_EQ(component(r, "valid"), 1);
  EXPECT_DOUBLE_EQ(component(r, "r_correct"), 1);
  EXPECT_DOUBLE_EQ(component(r, "r_speed"), 1.5);
  EXPECT_DOUBLE_EQ(r.total.value(), 1.15);
}

TEST(RewardTritonRL, SpeedupClipsAtTwo) {
  const Reward r = preset("tritonrl").evaluate(correctAt(5));
  EXPECT_DOUBLE_EQ(component(r, "r_speed"), 2);
  EXPECT_DOUBLE_EQ(r.total.value(), 1.2);
  EXPECT_DOUBLE_EQ(total(preset("tritonrl"), correctAt(2)), 1.2);
}

TEST(RewardTritonRL, CorrectButSlowIncorrectAndCheating) {
  EXPECT_DOUBLE_EQ(total(preset("tritonrl"), correctAt(0.5)), 1.05);
  const Reward wrong = preset("tritonrl").evaluate(incorrect());
  EXPECT_DOUBLE_EQ(component(wrong, "valid"), 1);
  EXPECT_DOUBLE_EQ(component(wrong, "r_correct"), 0);
  EXPECT_DOUBLE_EQ(wrong.total.value(), 0);
  const Reward cheat = preset("tritonrl").evaluate(cheating(3));
  EXPECT_DOUBLE_EQ(component(cheat, "valid"), 0);
  EXPECT_DOUBLE_EQ(component(cheat, "r_correct"), 0);
  EXPECT_DOUBLE_EQ(component(cheat, "r_speed"), 0);
  EXPECT_DOUBLE_EQ(cheat.total.value(), 0);
  EXPECT_DOUBLE_EQ(total(preset("tritonrl"), inputs(0, 0, 0, 0, 0)), 0);
}

TEST(RewardTritonRL, PlanAndCodePartsAreSeparate) {
  const Reward r = preset("tritonrl").evaluate(correctAt(1.8));
  ASSERT_EQ(r.components.size(), 3u);
  EXPECT_EQ(r.components[0].part, "");
  EXPECT_EQ(r.components[1].name, "r_correct");
  EXPECT_EQ(r.components[1].part, "code");
  EXPECT_DOUBLE_EQ(r.components[1].value, 1);
  EXPECT_EQ(r.components[2].name, "r_speed");
  EXPECT_EQ(r.components[2].part, "plan");
  EXPECT_DOUBLE_EQ(r.components[2].value, 1.8);
  // J = alpha x plan + code.
  EXPECT_DOUBLE_EQ(r.total.value(), 0.1 * 1.8 + 1);
}

// drtriton: r = 1 + log(speedup) if correct (and valid), else 0.
TEST(RewardDRTriton, LogSpeedup) {
  const Reward fast = preset("drtriton").evaluate(correctAt(2));
  EXPECT_THAT(names(fast), ElementsAre("valid", "r_correct", "r_speed"));
  EXPECT_DOUBLE_EQ(component(fast, "r_speed"), std::log(2.0));
  EXPECT_DOUBLE_EQ(fast.total.value(), 1 + std::log(2.0));
  EXPECT_NEAR(fast.total.value(), 1.693147, 1e-6);
  EXPECT_DOUBLE_EQ(total(preset("drtriton"), correctAt(1)), 1);
  EXPECT_NEAR(total(preset("drtriton"), correctAt(0.5)), 0.306853, 1e-6);
  // Slower than 1/e scores below an incorrect kernel, as the formula says.
  EXPECT_NEAR(total(preset("drtriton"), correctAt(0.1)), -1.302585, 1e-6);
}

TEST(RewardDRTriton, GatedWithoutNaN) {
  // Correct but not timed: no speed term, no log(0).
  const Reward untimed = preset("drtriton").evaluate(correctAt(0));
  EXPECT_DOUBLE_EQ(component(untimed, "r_speed"), 0);
  EXPECT_DOUBLE_EQ(untimed.total.value(), 1);
  EXPECT_DOUBLE_EQ(total(preset("drtriton"), incorrect()), 0);
  EXPECT_DOUBLE_EQ(total(preset("drtriton"), inputs(1, 1, 1, 0, 2)), 0);
  EXPECT_DOUBLE_EQ(total(preset("drtriton"), cheating(4)), 0);
  EXPECT_DOUBLE_EQ(total(preset("drtriton"), inputs(0, 0, 0, 0, 0)), 0);
}

// kevin: 0.3 x correct + speedup x correct, uncapped.
TEST(RewardKevin, Cases) {
  EXPECT_DOUBLE_EQ(total(preset("kevin"), correctAt(1.5)), 1.8);
  EXPECT_DOUBLE_EQ(total(preset("kevin"), correctAt(0.5)), 0.8);
  EXPECT_DOUBLE_EQ(total(preset("kevin"), correctAt(10)), 10.3);
  EXPECT_DOUBLE_EQ(total(preset("kevin"), correctAt(0)), 0.3);
  EXPECT_DOUBLE_EQ(total(preset("kevin"), incorrect()), 0);
  EXPECT_DOUBLE_EQ(total(preset("kevin"), cheating(3)), 0);
  const Reward r = preset("kevin").evaluate(correctAt(1.5));
  EXPECT_DOUBLE_EQ(component(r, "r_correct"), 1);
  EXPECT_DOUBLE_EQ(component(r, "r_speed"), 1.5);
}

// kernelgym: 0.3 x compiled + 0.4 x correct + 0.3 x min(speedup, 3) / 3.
TEST(RewardKernelGym, Cases) {
  const Reward r = preset("kernelgym").evaluate(correctAt(1.5));
  EXPECT_THAT(names(r), ElementsAre("valid", "r_compile", "r_correct", "r_speed"));
  EXPECT_DOUBLE_EQ(component(r, "r_compile"), 1);
  EXPECT_DOUBLE_EQ(component(r, "r_correct"), 1);
  EXPECT_DOUBLE_EQ(component(r, "r_speed"), 0.5);
  EXPECT_DOUBLE_EQ(r.total.value(), 0.85);
  EXPECT_DOUBLE_EQ(total(preset("kernelgym"), correctAt(0.5)), 0.75);
  EXPECT_DOUBLE_EQ(total(preset("kernelgym"), incorrect()), 0.3);
  EXPECT_DOUBLE_EQ(total(preset("kernelgym"), inputs(1, 0, 0, 0, 0)), 0);
  EXPECT_DOUBLE_EQ(total(preset("kernelgym"), cheating(2)), 0);
}

TEST(RewardKernelGym, SpeedupClipsAtThree) {
  EXPECT_DOUBLE_EQ(total(preset("kernelgym"), correctAt(3)), 1.0);
  EXPECT_DOUBLE_EQ(total(preset("kernelgym"), correctAt(6)), 1.0);
  EXPECT_DOUBLE_EQ(component(preset("kernelgym").evaluate(correctAt(100)), "r_speed"), 1.0);
  // Speed is gated by correctness even if a speedup was reported.
  EXPECT_DOUBLE_EQ(total(preset("kernelgym"), inputs(1, 1, 1, 0, 3)), 0.3);
}

TEST(RewardEvaluate, RejectsInputsOutsideTheirDomain) {
  const RewardPreset& p = preset("kevin");
  EXPECT_THROW(p.evaluate(inputs(1, 1, 1, 0.5, 1)), std::invalid_argument);
  EXPECT_THROW(p.evaluate(correctAt(-1)), std::invalid_argument);
  EXPECT_THROW(p.evaluate(correctAt(std::numeric_limits<double>::infinity())),
               std::invalid_argument);
  EXPECT_THROW(p.evaluate(correctAt(std::nan(""))), std::invalid_argument);
  EXPECT_THROW(RewardPreset().evaluate(correctAt(1)), std::logic_error);
  try {
    p.evaluate(inputs(1, 1, 1, 0.5, 1));
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("correct must be 0 or 1, got 0.5"));
  }
}

TEST(RewardEvaluate, CopiesShareTheParsedExpressions) {
  RewardPreset copy = preset("tritonrl");
  EXPECT_EQ(copy.evaluate(correctAt(1.5)), preset("tritonrl").evaluate(correctAt(1.5)));
}

// --- JSON ------------------------------------------------------------------------------------

TEST(RewardJson, ShapeForTheCli) {
  const Reward r = preset("tritonrl").evaluate(correctAt(1.5));
  const nlohmann::json j = r;
  EXPECT_EQ(j["preset"], "tritonrl");
  EXPECT_DOUBLE_EQ(j["total"].get<double>(), 1.15);
  ASSERT_TRUE(j["components"].is_object());
  EXPECT_DOUBLE_EQ(j["components"]["r_speed"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["components"]["r_correct"].get<double>(), 1);
  EXPECT_EQ(j["order"], nlohmann::json({"valid", "r_correct", "r_speed"}));
  EXPECT_EQ(j["parts"], nlohmann::json::parse(R"({"plan": ["r_speed"], "code": ["r_correct"]})"));
}

TEST(RewardJson, RoundTrip) {
  for (const auto& p : builtinRewardPresets()) {
    const Reward r = p.evaluate(correctAt(1.7));
    const Reward back = nlohmann::json::parse(nlohmann::json(r).dump()).get<Reward>();
    EXPECT_EQ(back, r) << p.name();
  }
  Reward failed = preset("kevin").evaluate(incorrect());
  failed.total = std::nullopt;
  const nlohmann::json j = failed;
  EXPECT_TRUE(j["total"].is_null());
  EXPECT_EQ(j.get<Reward>(), failed);
  EXPECT_EQ(nlohmann::json(Reward{}).get<Reward>(), Reward{});
}

TEST(RewardJson, ReadsWithoutOrderAndRejectsInconsistentParts) {
  auto read = [](const char* text) { return nlohmann::json::parse(text).get<Reward>(); };
  const Reward r = read(R"({"preset": "p", "total": 1, "components": {"b": 2, "a": 1}})");
  EXPECT_THAT(names(r), ElementsAre("a", "b"));
  EXPECT_EQ(r.total, 1.0);
  EXPECT_THROW(read(R"({"preset": "p", "components": {"a": 1}, "order": ["a", "z"]})"),
               std::invalid_argument);
  EXPECT_THROW(read(R"({"preset": "p", "components": {"a": 1, "b": 2}, "order": ["a"]})"),
               std::invalid_argument);
  EXPECT_THROW(read(R"({"preset": "p", "components": {"a": 1}, "parts": {"plan": ["z"]}})"),
               std::invalid_argument);
  EXPECT_THROW(
      read(R"({"preset": "p", "components": {"a": 1}, "parts": {"plan": ["a"], "code": ["a"]}})"),
      std::invalid_argument);
  EXPECT_THROW(read(R"({"preset": "p", "total": "high", "components": {}})"),
               std::invalid_argument);
  EXPECT_THROW(read(R"({"preset": "p", "components": {"a": "one"}})"), std::invalid_argument);
}

// --- preset format errors --------------------------------------------------------------------

TEST(RewardPresetParse, UnknownIdentifierSaysWhereAndWhatIsKnown) {
  const std::string message = parseError(presetWith("speedup * speed"));
  EXPECT_THAT(message,
              HasSubstr("preset 'x', component 'y': unknown identifier 'speed' at column 11"));
  EXPECT_THAT(message,
              HasSubstr("known here: syntax, functionality, compiled, correct, speedup, k"));
  EXPECT_THAT(parseError(presetWith("correct", "y + z")),
              HasSubstr("preset 'x', total: unknown identifier 'z' at column 5"));
}

TEST(RewardPresetParse, LaterComponentIsNotVisible) {
  const std::string text = R"({"name": "x", "components": [
      {"name": "a", "expr": "b * 2"}, {"name": "b", "expr": "correct"}], "total": "a"})";
  EXPECT_THAT(parseError(text),
              HasSubstr("component 'a': unknown identifier 'b' at column 1 (a component can use "
                        "only the components defined before it)"));
}

TEST(RewardPresetParse, SyntaxErrorsSayWhatAndWhere) {
  EXPECT_THAT(parseError(presetWith("speedup)")),
              HasSubstr("preset 'x', component 'y': unexpected ')' at column 8"));
  EXPECT_THAT(parseError(presetWith("min(speedup, 2))")), HasSubstr("unexpected ')' at column 16"));
  EXPECT_THAT(parseError(presetWith("1 +")), HasSubstr("unexpected end of expression at column 4"));
  EXPECT_THAT(parseError(presetWith("min(1")),
              HasSubstr("expected ',' or ')' but found end of expression at column 6"));
  EXPECT_THAT(parseError(presetWith("(1 + 2")), HasSubstr("expected ')' but found end"));
  EXPECT_THAT(parseError(presetWith("log(1, 2)")),
              HasSubstr("'log' takes 1 argument, got 2 at column 1"));
  EXPECT_THAT(parseError(presetWith("clip(speedup, 1)")),
              HasSubstr("'clip' takes 3 arguments, got 2 at column 1"));
  EXPECT_THAT(parseError(presetWith("min(1)")), HasSubstr("'min' takes at least 2 arguments"));
  EXPECT_THAT(parseError(presetWith("foo(1)")), HasSubstr("unknown function 'foo' at column 1"));
  EXPECT_THAT(parseError(presetWith("2 * speedup(1)")),
              HasSubstr("'speedup' is not a function at column 5"));
  EXPECT_THAT(parseError(presetWith("min + 1")), HasSubstr("'min' is a function"));
  EXPECT_THAT(parseError(presetWith("0 < k < 3")), HasSubstr("comparisons do not chain"));
  EXPECT_THAT(parseError(presetWith("k = 2")),
              HasSubstr("unexpected character '=' at column 3 (did you mean '=='?)"));
  EXPECT_THAT(parseError(presetWith("1..2")), HasSubstr("malformed number '1..2' at column 1"));
  EXPECT_THAT(parseError(presetWith("2x")), HasSubstr("malformed number '2x' at column 1"));
  EXPECT_THAT(parseError(presetWith("  ")), HasSubstr("component 'y': empty expression"));
  EXPECT_THAT(parseError(presetWith("k $ 2")), HasSubstr("unexpected character '$' at column 3"));
  EXPECT_THAT(parseError(presetWith("k * * 2")), HasSubstr("unexpected '*' at column 5"));
}

TEST(RewardPresetParse, StructureErrors) {
  EXPECT_THAT(parseError("{"), HasSubstr("reward preset: invalid JSON"));
  EXPECT_THAT(parseError("[]"), HasSubstr("expected a JSON object"));
  EXPECT_THAT(parseError(R"({"components": [], "total": "1"})"), HasSubstr("missing 'name'"));
  EXPECT_THAT(parseError(R"({"name": "x", "components": []})"),
              HasSubstr("preset 'x': missing 'total'"));
  EXPECT_THAT(parseError(R"({"name": "x", "total": "1"})"),
              HasSubstr("'components' must be an array"));
  EXPECT_THAT(parseError(R"({"name": "x", "componets": [], "components": [], "total": "1"})"),
              HasSubstr("unknown key 'componets'"));
  EXPECT_THAT(
      parseError(R"({"name": "x", "components": [{"name": "a", "exp": "1"}], "total": "1"})"),
      HasSubstr("component 'a': unknown key 'exp'"));
  EXPECT_THAT(parseError(R"({"name": "x", "params": {"k": "2"}, "components": [], "total": "k"})"),
              HasSubstr("param 'k': must be a number"));
  EXPECT_THAT(parseError(R"({"name": "x", "components": [{"name": "correct", "expr": "1"}],
                             "total": "1"})"),
              HasSubstr("component 'correct': the name is a variable or function"));
  EXPECT_THAT(parseError(R"({"name": "x", "components": [{"name": "a", "expr": "1"},
                             {"name": "a", "expr": "2"}], "total": "1"})"),
              HasSubstr("component 'a': the name is already defined"));
  EXPECT_THAT(parseError(R"({"name": "x", "params": {"a": 1}, "components": [
                             {"name": "a", "expr": "2"}], "total": "1"})"),
              HasSubstr("already defined"));
  EXPECT_THAT(parseError(R"({"name": "x", "components": [{"name": "a", "expr": "1",
                             "part": ""}], "total": "1"})"),
              HasSubstr("part '' must be a name"));
  EXPECT_THAT(parseError(R"({"name": "bad name", "components": [], "total": "1"})"),
              HasSubstr("reward preset 'bad name'"));
}

TEST(RewardPresetParse, ValidPresetKeepsItsFields) {
  const RewardPreset p = RewardPreset::parse(R"json({"name": "mine", "description": "d",
      "params": {"w": 0.5},
      "components": [{"name": "hit", "expr": "correct", "part": "code"},
                     {"name": "fast", "expr": "hit * (speedup >= 1)", "part": "plan"}],
      "total": "w * hit + fast"})json");
  EXPECT_EQ(p.name(), "mine");
  EXPECT_EQ(p.description(), "d");
  const Reward r = p.evaluate(correctAt(1.2));
  EXPECT_EQ(r.components, (std::vector<RewardComponent>{{"hit", 1, "code"}, {"fast", 1, "plan"}}));
  EXPECT_DOUBLE_EQ(r.total.value(), 1.5);
  EXPECT_DOUBLE_EQ(p.evaluate(correctAt(0.9)).total.value(), 0.5);
}

// --- undefined values: division by zero, log of 0 --------------------------------------------

TEST(RewardPresetParse, UnguardedDivisionByZeroFailsAtLoad) {
  const std::string message = parseError(presetWith("1 / speedup"));
  EXPECT_THAT(message, HasSubstr("preset 'x', component 'y': division by zero at column 3"));
  EXPECT_THAT(message, HasSubstr("speedup=0"));
  EXPECT_THAT(message, HasSubstr("guard it with if("));
  // Gated by correctness alone is not enough: a correct kernel may be untimed (speedup 0).
  EXPECT_THAT(parseError(presetWith("if(correct, 1 / speedup, 0)")), HasSubstr("division by zero"));
}

TEST(RewardPresetParse, UnguardedLogFailsAtLoadGuardedLogLoads) {
  EXPECT_THAT(parseError(presetWith("log(speedup)")),
              HasSubstr("log of 0 at column 1 (the argument must be > 0)"));
  EXPECT_THAT(parseError(presetWith("correct", "log(y - 1)")), HasSubstr("preset 'x', total: log"));
  const RewardPreset p = RewardPreset::parse(presetWith("if(speedup > 0, 1 / speedup, 0)"));
  EXPECT_DOUBLE_EQ(p.evaluate(correctAt(2)).total.value(), 0.5);
  EXPECT_DOUBLE_EQ(p.evaluate(correctAt(0)).total.value(), 0);
}

TEST(RewardPresetParse, DomainErrorsMissedByTheProbesThrowAtEvaluation) {
  // Undefined only for speedups between the probes: loads, then fails loudly, never NaN.
  const RewardPreset p = RewardPreset::parse(presetWith("if(speedup == 0.7, 1 / (k - 2), 0)"));
  EXPECT_DOUBLE_EQ(p.evaluate(correctAt(1)).total.value(), 0);
  try {
    p.evaluate(correctAt(0.7));
    ADD_FAILURE() << "expected a domain error";
  } catch (const std::domain_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("preset 'x', component 'y': division by zero at column 22"));
  }
}

// --- the expression language -----------------------------------------------------------------

TEST(RewardExpression, ArithmeticAndPrecedence) {
  EXPECT_DOUBLE_EQ(evalExpr("1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(evalExpr("(1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(evalExpr("2 - 3 - 4"), -5);
  EXPECT_DOUBLE_EQ(evalExpr("8 / 4 / 2"), 1);
  EXPECT_DOUBLE_EQ(evalExpr("-2 * 3"), -6);
  EXPECT_DOUBLE_EQ(evalExpr("--2"), 2);
  EXPECT_DOUBLE_EQ(evalExpr("+2 - -a", {3}), 5);
  EXPECT_DOUBLE_EQ(evalExpr("1e-3 * 1000 + .5 + 2.5E1"), 26.5);
  EXPECT_DOUBLE_EQ(evalExpr("a * b", {3, 4}), 12);
  EXPECT_DOUBLE_EQ(evalExpr("1 + 2 < 4"), 1);
  EXPECT_DOUBLE_EQ(evalExpr("2 >= 2") + evalExpr("2 > 2") + evalExpr("2 != 2"), 1);
  EXPECT_DOUBLE_EQ(evalExpr("(1 < 2) + (3 <= 2) + (2 == 2)"), 2);
}

TEST(RewardExpression, Functions) {
  EXPECT_DOUBLE_EQ(evalExpr("min(3, 1, 2)"), 1);
  EXPECT_DOUBLE_EQ(evalExpr("max(1, 5, 3)"), 5);
  EXPECT_DOUBLE_EQ(evalExpr("clip(5, 0, 3) + clip(-1, 0, 3) + clip(2, 0, 3)"), 5);
  EXPECT_DOUBLE_EQ(evalExpr("log(exp(2))"), 2);
  EXPECT_DOUBLE_EQ(evalExpr("sqrt(16) + abs(-2) + pow(2, 10)"), 1030);
  EXPECT_DOUBLE_EQ(evalExpr("if(a, 1, 2)", {0}), 2);
  EXPECT_DOUBLE_EQ(evalExpr("if(a, 1, 2)", {0.5}), 1);
}

TEST(RewardExpression, IfEvaluatesOnlyItsBranch) {
  EXPECT_DOUBLE_EQ(evalExpr("if(a > 0, log(a), 0)", {0}), 0);
  EXPECT_DOUBLE_EQ(evalExpr("if(a, 1 / 0, 7)", {0}), 7);
  EXPECT_DOUBLE_EQ(evalExpr("if(a, 7, 1 / 0)", {1}), 7);
}

TEST(RewardExpression, UndefinedValuesAreErrorsWithColumns) {
  EXPECT_THAT(exprError("1 / 0"), HasSubstr("division by zero at column 3"));
  EXPECT_THAT(exprError("2 + 1 / a"), HasSubstr("division by zero at column 7"));
  EXPECT_THAT(exprError("log(a)"), HasSubstr("log of 0 at column 1"));
  EXPECT_THAT(exprError("log(-1)"), HasSubstr("log of -1"));
  EXPECT_THAT(exprError("sqrt(-4)"), HasSubstr("sqrt of -4"));
  EXPECT_THAT(exprError("exp(1000)"), HasSubstr("exp is not finite"));
  EXPECT_THAT(exprError("pow(-8, 0.5)"), HasSubstr("pow(-8, 0.5) is undefined"));
  EXPECT_THAT(exprError("pow(0, -1)"), HasSubstr("pow(0, -1)"));
  EXPECT_THAT(exprError("1e308 * 10"), HasSubstr("'*' is not finite"));
  EXPECT_THAT(exprError("clip(1, 3, 0)"), HasSubstr("clip with lo 3 > hi 0"));
  try {
    evalExpr("1 + log(a)", {0});
    ADD_FAILURE();
  } catch (const ExpressionDomainError& e) {
    EXPECT_EQ(e.column(), 5u);
  }
  EXPECT_THROW(evalExpr("a", {std::numeric_limits<double>::quiet_NaN()}), ExpressionDomainError);
}

TEST(RewardExpression, SyntaxErrorCarriesColumn) {
  try {
    evalExpr("(a + 1))");
    ADD_FAILURE();
  } catch (const ExpressionSyntaxError& e) {
    EXPECT_EQ(e.column(), 8u);
    EXPECT_STREQ(e.what(), "unexpected ')' at column 8");
  }
  EXPECT_THAT(exprError(std::string(500, '(') + "1" + std::string(500, ')')),
              HasSubstr("nested too deeply"));
  EXPECT_THAT(exprError(std::string(500, '-') + "1"), HasSubstr("nested too deeply"));
}

TEST(RewardExpression, ParsedOnceEvaluatedMany) {
  auto expression = RewardExpression::parse("a * min(b, 2)", [](std::string_view name) {
    return name == "a"   ? std::optional<std::size_t>(0)
           : name == "b" ? std::optional<std::size_t>(3)
                         : std::nullopt;
  });
  EXPECT_EQ(expression.slotsNeeded(), 4u);
  EXPECT_EQ(expression.text(), "a * min(b, 2)");
  const std::vector<double> slots = {2, 0, 0, 5};
  for (int i = 0; i < 1000; ++i) ASSERT_DOUBLE_EQ(expression.evaluate(slots), 4);
  EXPECT_THROW(expression.evaluate(std::vector<double>{1, 2}), std::invalid_argument);
}

}  // namespace
}  // namespace crucible
