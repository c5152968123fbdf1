// The line maps of Triton's compiled levels (core/inspect/ir_line_map). The files in
// data/ir/ are real output of Triton's compiler for sm_90 (the ir stage without a GPU, on the
// candidate of tests/worker/test_ir_stage.py, its path rewritten to /job/src-cand): the kernel
// `double_kernel` is defined at line 13, loads at line 17 and stores at line 18 the value of the
// helper `scale` (line 9, inlined).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/inspect/ir_line_map.h"
#include "core/inspect/kernel_ir.h"

namespace crucible::inspect {
namespace {

const std::vector<std::string> kFiles = {"/job/src-cand/candidate.py"};

std::string fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(CRUCIBLE_TEST_DATA_DIR) / "unit" / "data" / "ir" / name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The mapped line of the first text line containing `needle` (-1: no line contains it, 0:
/// the line is not mapped).
int mappedLine(const std::string& text, const LineMap& map, const std::string& needle) {
  const auto lines = splitIrLines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(needle) != std::string::npos) return map.at(i).value_or(0);
  }
  return -1;
}

TEST(IrLineMap, TtirResolvesAliasesNamesAndCallsites) {
  for (const char* level : {"double_kernel.ttir", "double_kernel.ttgir"}) {
    const std::string text = fixture(level);
    ASSERT_FALSE(text.empty()) << level;
    const LineMap map = mlirLineMap(text, kFiles);
    ASSERT_EQ(map.size(), splitIrLines(text).size());
    EXPECT_EQ(mappedLine(text, map, "tt.load"), 17) << level;
    EXPECT_EQ(mappedLine(text, map, "tt.store"), 18) << level;
    EXPECT_EQ(mappedLine(text, map, "tt.get_program_id"), 14) << level;
    // The inlined helper's multiply: callsite(helper at kernel), the helper's own line.
    EXPECT_EQ(mappedLine(text, map, "arith.mulf"), 9) << level;
    EXPECT_EQ(mappedLine(text, map, "loc(unknown)"), 0) << level;  // unknown, and an alias line
    EXPECT_EQ(mappedLine(text, map, "tt.func public"), 13) << level;
  }
}

TEST(IrLineMap, LlvmIrFollowsDbgToLocationsScopesAndFiles) {
  const std::string text = fixture("double_kernel.llir");
  const LineMap map = llvmLineMap(text, kFiles);
  ASSERT_EQ(map.size(), splitIrLines(text).size());
  EXPECT_EQ(mappedLine(text, map, "define ptx_kernel"), 13);  // !dbg of a DISubprogram
  EXPECT_EQ(mappedLine(text, map, "sreg.ctaid.x"), 14);
  EXPECT_EQ(mappedLine(text, map, "ld.global"), 17);
  EXPECT_EQ(mappedLine(text, map, "fmul"), 9);  // inlined: scope is a lexical block of the file
  EXPECT_EQ(mappedLine(text, map, "!DILocation"), 0);  // the metadata table itself
  EXPECT_EQ(mappedLine(text, map, "source_filename"), 0);
}

TEST(IrLineMap, PtxKeepsEachLocUntilTheNextOrTheFunctionsEnd) {
  const std::string text = fixture("double_kernel.ptx");
  const LineMap map = ptxLineMap(text, kFiles);
  ASSERT_EQ(map.size(), splitIrLines(text).size());
  EXPECT_EQ(mappedLine(text, map, "ld.global"), 17);
  EXPECT_EQ(mappedLine(text, map, "st.global"), 18);
  EXPECT_EQ(mappedLine(text, map, "add.f32"), 9);          // x * 2.0, inlined from the helper
  EXPECT_EQ(mappedLine(text, map, ".visible .entry"), 0);  // before the first .loc
  EXPECT_EQ(mappedLine(text, map, ".section\t.debug_info"), 0);
  EXPECT_EQ(mappedLine(text, map, "DW_TAG_compile_unit"), 0);  // after the function's end
}

TEST(IrLineMap, OnlyTheCandidatesFileCounts) {
  const std::string mlir =
      "#loc = loc(\"/job/src-cand/candidate.py\":5:0)\n"
      "#loc1 = loc(\"/elsewhere/lib.py\":40:3)\n"
      "#loc2 = loc(\"/job/src-cand/candidate.py\":7:9)\n"
      "  %0 = arith.addf %a, %b : f32 loc(#loc1)\n"
      "  %1 = arith.mulf %a, %b : f32 loc(callsite(#loc1 at #loc2))\n"
      "  %2 = arith.subf %a, %b : f32 loc(fused[#loc1, \"x\"(#loc2)])\n"
      "  %3 = arith.divf %a, %b : f32 loc(\"/job/src-cand/candidate.py\":8:1)\n";
  const LineMap m = mlirLineMap(mlir, kFiles);
  EXPECT_EQ(m[3], std::nullopt);
  EXPECT_EQ(m[4], 7);  // the callee is elsewhere: the call site in the candidate
  EXPECT_EQ(m[5], 7);
  EXPECT_EQ(m[6], 8);
  const std::string ptx =
      "\t.loc\t2 40 3\n\tadd.f32 %f1, %f2, %f3;\n"
      "\t.loc\t2 41 3, function_name $L__info_string0, inlined_at 1 12 5\n\tmul.f32 %f4;\n"
      "\t.file\t1 \"/job/src-cand/candidate.py\"\n\t.file\t2 \"/elsewhere/lib.py\"\n";
  const LineMap p = ptxLineMap(ptx, kFiles);
  EXPECT_EQ(p[1], std::nullopt);
  EXPECT_EQ(p[3], 12);
}

TEST(IrLineMap, MalformedTextGivesUnmappedLinesNotErrors) {
  const std::vector<std::string> texts = {
      "",
      "\n\n",
      "loc(",
      "x loc(#loc9)\n#loc9 = loc(#loc9)\n",
      "#loc1 = loc(callsite(\n",
      "  %1 = add i32 %0, 1, !dbg !99999999999999\n!5 = !DILocation(line: , scope: !5)\n",
      "\t.loc\t1\n\t.file 1 \"unterminated\n",
      std::string(100000, '(')};
  for (const auto& t : texts) {
    for (const char* level : {"ttir", "llir", "ptx"}) {
      const auto map = lineMapFor(level, t, kFiles);
      ASSERT_TRUE(map.has_value());
      EXPECT_EQ(map->size(), splitIrLines(t).size());
      for (const auto& line : *map)
        EXPECT_EQ(line, std::nullopt) << level << ": " << t.substr(0, 40);
    }
  }
  EXPECT_EQ(lineMapFor("opencl_c", "x", kFiles), std::nullopt);
}

}  // namespace
}  // namespace crucible::inspect
