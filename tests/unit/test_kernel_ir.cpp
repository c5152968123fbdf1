// The kernel IR report (core/inspect/kernel_ir) and how the ir stage's facts become one
// (core/inspect/ir_run's reportFromFacts): JSON both ways, line maps checked or parsed, offsets
// for a candidate taken from a model response, malformed facts as errors in the report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/inspect/ir_run.h"
#include "core/inspect/kernel_ir.h"

namespace crucible::inspect {
namespace {

using nlohmann::json;

KernelIrReport sampleReport() {
  KernelIrReport r;
  r.backend = "opencl";
  r.compiled = true;
  r.target = "OpenCL C";
  r.note = "";
  r.candidateFile = "cand.py";
  KernelIr k{"add_kernel", 9, "x: *fp32, BLOCK=1024", {}, std::nullopt};
  k.levels.push_back({"opencl_c", "a\nb\nc\n", {std::nullopt, 12, 16}, std::nullopt});
  k.levels.push_back({"ptx", "", {}, IrError{"compile", "no ptx", "cand.py", 3}});
  r.kernels.push_back(k);
  r.kernels.push_back({"other", std::nullopt, "", {}, IrError{"compile", "boom", "cand.py", 20}});
  r.error = IrError{"forward", "ValueError: x", "cand.py", 31};
  return r;
}

TEST(KernelIr, JsonRoundTripKeepsEveryField) {
  const KernelIrReport r = sampleReport();
  const json j = toJson(r);
  EXPECT_EQ(j["kernels"][0]["levels"][0]["line_map"], json::parse("[null, 12, 16]"));
  EXPECT_EQ(j["kernels"][0]["def_line"], 9);
  EXPECT_TRUE(j["kernels"][1]["def_line"].is_null());
  EXPECT_EQ(j["error"]["line"], 31);
  const KernelIrReport back = kernelIrReportFromJson(j);
  EXPECT_EQ(toJson(back), j);
  EXPECT_EQ(back.kernels[0].levels[0].lineMap[1], 12);
  EXPECT_EQ(back.kernels[1].error->message, "boom");
}

TEST(KernelIr, FromJsonNamesAMissingOrWrongKey) {
  json j = toJson(sampleReport());
  j.erase("backend");
  EXPECT_THROW(kernelIrReportFromJson(j), std::invalid_argument);
  j = toJson(sampleReport());
  j["kernels"][0]["levels"][0]["line_map"][1] = "twelve";
  EXPECT_THROW(kernelIrReportFromJson(j), std::invalid_argument);
}

TEST(KernelIr, SplitLinesCountsNoLineAfterAFinalNewline) {
  EXPECT_EQ(splitIrLines("a\nb\n").size(), 2u);
  EXPECT_EQ(splitIrLines("a\nb").size(), 2u);
  EXPECT_EQ(splitIrLines("").size(), 0u);
  EXPECT_EQ(splitIrLines("\n").size(), 1u);
}

json openclFacts(json lineMap) {
  return {{"backend", "opencl"},
          {"compiled", true},
          {"target", "OpenCL C"},
          {"note", nullptr},
          {"error", nullptr},
          {"kernels",
           {{{"name", "k"},
             {"def_line", 8},
             {"file", "/job/cand.py"},
             {"specialization", "BLOCK=4"},
             {"error", nullptr},
             {"levels",
              {{{"name", "opencl_c"},
                {"text", "x\ny\n"},
                {"line_map", lineMap},
                {"error", nullptr}}}}}}}};
}

TEST(KernelIrFacts, OpenclMapIsTheStagesCheckedAndShiftedByTheOffset) {
  const auto r =
      reportFromFacts(openclFacts(json::parse("[null, 12]")), {"/job/cand.py"}, "response.md", 4);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].defLine, 12);
  const auto& level = r.kernels[0].levels.at(0);
  EXPECT_FALSE(level.error);
  EXPECT_EQ(level.lineMap, (std::vector<std::optional<int>>{std::nullopt, 16}));
  // A map that does not fit its text is dropped, with a reason.
  const auto bad = reportFromFacts(openclFacts(json::parse("[1, 2, 3]")), {}, "c.py");
  EXPECT_TRUE(bad.kernels[0].levels[0].lineMap.empty());
  ASSERT_TRUE(bad.kernels[0].levels[0].error);
}

TEST(KernelIrFacts, CudaLevelsAreParsedForTheCandidatesFileOnly) {
  json facts = openclFacts(nullptr);
  facts["backend"] = "cuda";
  facts["kernels"][0]["levels"] = {
      {{"name", "ttir"},
       {"text", "%0 = tt.load %p loc(\"/job/cand.py\":10:4)\n%1 = x loc(\"/lib.py\":3:1)\n"},
       {"line_map", nullptr},
       {"error", nullptr}}};
  const auto r = reportFromFacts(facts, {}, "cand.py");
  // The kernel's own file (from the facts) counts; other files do not.
  EXPECT_EQ(r.kernels[0].levels[0].lineMap, (std::vector<std::optional<int>>{10, std::nullopt}));
}

TEST(KernelIrFacts, MalformedFactsBecomeErrorsNotExceptions) {
  EXPECT_TRUE(reportFromFacts(json(), {}, "c.py").error);
  const auto r = reportFromFacts(
      json{{"kernels", {1, "x", {{"levels", 3}}, {{"name", 5}, {"levels", {{{"text", 7}}}}}}},
           {"error", {{"stage", "forward"}, {"message", "ValueError"}, {"line", "x"}}}},
      {}, "c.py");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->file, "c.py");
  EXPECT_FALSE(r.error->line);
  EXPECT_EQ(r.kernels.size(), 2u);
}

TEST(KernelIrFacts, InterpretSaysNothingIsCompiled) {
  const auto r = reportFromFacts({{"backend", "interpret"},
                                  {"compiled", false},
                                  {"note", "the interpret backend compiles nothing"},
                                  {"kernels", json::array()},
                                  {"error", nullptr}},
                                 {}, "c.py");
  EXPECT_FALSE(r.compiled);
  EXPECT_FALSE(r.error);
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_NE(r.note.find("compiles nothing"), std::string::npos);
}

}  // namespace
}  // namespace crucible::inspect
