// A bench run's report folder: the settings it records, the rows a later run resumes from, and
// the refusal of a folder that holds a run with other settings.
#include <gtest/gtest.h>

#include <fstream>

#include "core/bench/report_folder.h"
#include "temp_dir.h"

namespace crucible::bench {
namespace {

RunSettings settingsFor(const std::string& backend) {
  RunSettings s;
  s.taskDir = "resources/tasks";
  s.backend = backend;
  return s;
}

TaskResult rowFor(const std::string& id, const std::string& error = "") {
  TaskResult t;
  t.id = id;
  t.file = id + ".py";
  t.error = error;
  return t;
}

TEST(ReportFolder, ALaterRunWithTheSameSettingsReadsTheRowsBack) {
  test::TempDir dir;
  const auto folder = dir.path() / "report";
  {
    ReportFolder first(folder, settingsFor("opencl"), false);
    EXPECT_TRUE(first.finished().empty());
    ASSERT_TRUE(first.append(rowFor("level1/1_a")));
    ASSERT_TRUE(first.append(rowFor("level1/2_b", "the generator failed")));
    ASSERT_TRUE(first.append(rowFor("level1/1_a")));  // the last line of a task wins
  }
  {
    std::ofstream cut(folder / "results.jsonl", std::ios::app);
    cut << "{\"id\": \"level1/3_c\", \"samp";  // a line cut short by a crash
  }
  ReportFolder again(folder, settingsFor("opencl"), false);
  ASSERT_EQ(again.finished().size(), 2u);
  EXPECT_EQ(again.finished().at("level1/2_b").error, "the generator failed");
  EXPECT_EQ(again.unreadableLines(), 1);
  EXPECT_TRUE(std::filesystem::exists(folder / "run.json"));
  EXPECT_EQ(again.shrunkDir(), folder / "shrunk");
}

TEST(ReportFolder, OtherSettingsAreRefusedAndFreshStartsOver) {
  test::TempDir dir;
  const auto folder = dir.path() / "report";
  {
    ReportFolder first(folder, settingsFor("opencl"), false);
    ASSERT_TRUE(first.append(rowFor("level1/1_a")));
  }
  try {
    ReportFolder other(folder, settingsFor("cuda"), false);
    FAIL() << "a run with another backend resumed";
  } catch (const ReportFolderMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("backend"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--fresh"), std::string::npos) << e.what();
  }
  ReportFolder fresh(folder, settingsFor("cuda"), true);
  EXPECT_TRUE(fresh.finished().empty());
  EXPECT_FALSE(std::filesystem::exists(folder / "results.jsonl"));
  ReportFolder resumed(folder, settingsFor("cuda"), false);  // run.json now says cuda
  EXPECT_TRUE(resumed.finished().empty());
}

}  // namespace
}  // namespace crucible::bench
