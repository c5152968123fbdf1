// Which folders each worker stage may not look inside (the Landlock plan's `hidden`).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/util/locations.h"
#include "core/verify/worker_stage.h"

namespace crucible {
namespace {

bool hides(const std::string& stage, const std::string& folder) {
  const auto hidden = hiddenFolders(stage);
  return std::find(hidden.begin(), hidden.end(), folder) != hidden.end();
}

TEST(HiddenFolders, EveryStageIsKeptOutOfOtherJobs) {
  for (const char* stage : {"static", "reference", "baseline", "candidate", "trace"}) {
    EXPECT_TRUE(hides(stage, temporaryRoot())) << stage;
  }
}

TEST(HiddenFolders, OnlyTheBaselineSeesItsCompileCaches) {
  const std::string cache = baselineCompileCache().string();
  EXPECT_FALSE(hides("baseline", cache));
  for (const char* stage : {"static", "reference", "candidate", "trace", "synthcheck"}) {
    EXPECT_TRUE(hides(stage, cache)) << stage;
  }
  EXPECT_EQ(baselineCompileCache().parent_path().string(), userCacheDir());
}

}  // namespace
}  // namespace crucible
