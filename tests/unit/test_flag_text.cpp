#include <gtest/gtest.h>

#include "core/verify/flag_text.h"

using namespace crucible;
using nlohmann::json;

TEST(FlagText, EvidenceReadsAsWordsNotJson) {
  const json evidence = {{"aten_ops", {{"aten::mm", 1}, {"aten::_softmax", 3}}},
                         {"lines", {{"31", 3}}},
                         {"mode", "forward"},
                         {"candidate_ms", 0.012345678},
                         {"unset", nullptr}};
  const std::string text = evidenceText(evidence);
  EXPECT_NE(text.find("PyTorch ops (x times): aten::_softmax x3, aten::mm x1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("candidate lines (x times): 31 x3"), std::string::npos) << text;
  EXPECT_NE(text.find("mode: forward"), std::string::npos) << text;
  EXPECT_NE(text.find("candidate's time (ms): 0.01235"), std::string::npos) << text;
  EXPECT_EQ(text.find("unset"), std::string::npos);
  EXPECT_EQ(text.find('{'), std::string::npos) << text;
}

TEST(FlagText, NestedAndLongEvidenceStaysReadable) {
  json many = json::object();
  for (int i = 0; i < 12; ++i) many["op" + std::to_string(i)] = 12 - i;
  const json evidence = {{"device", {{"bandwidth_gbs", 3350.0}, {"name", "gpu"}}},
                         {"calls", many},
                         {"reasons", json::array({"a", "b"})},
                         {"note", std::string(500, 'x')}};
  const std::string text = evidenceText(evidence);
  EXPECT_NE(text.find("device:\n  bandwidth gbs: 3350\n  name: gpu"), std::string::npos) << text;
  EXPECT_NE(text.find("op0 x12"), std::string::npos);
  EXPECT_NE(text.find("and 4 more"), std::string::npos) << text;
  EXPECT_NE(text.find("reasons: a, b"), std::string::npos);
  EXPECT_LT(text.size(), 700u);
}

TEST(FlagText, HoverTextSaysWhatTheFlagMeans) {
  const Flag flag = makeFlag("torch_compute_in_forward", "PyTorch computed during forward", 31,
                             {{"aten_ops", {{"aten::_softmax", 2}}}});
  const std::string text = flagHoverText(flag);
  EXPECT_EQ(text.rfind("Cheating: torch_compute_in_forward (", 0), 0u) << text;
  EXPECT_NE(text.find("PyTorch computed during forward"), std::string::npos);
  EXPECT_NE(text.find("aten::_softmax x2"), std::string::npos);
}
