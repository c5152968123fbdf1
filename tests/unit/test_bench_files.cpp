// The benchmark's file handling: --shrink's size constants, the task folders bench reads, and
// KernelBench's eval_results.json written, read back and read in its published forms.

#include <gtest/gtest.h>

#include <fstream>

#include "core/bench/eval_results.h"
#include "core/bench/metrics.h"
#include "core/bench/shrink.h"
#include "core/bench/task_set.h"
#include "tests/unit/bench_samples.h"
#include "tests/unit/temp_dir.h"

namespace crucible::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(BenchShrink, SizesScaleToMultiplesOfTheirPowersOfTwo) {
  EXPECT_EQ(shrinkSize(16, 0.25), 4);
  EXPECT_EQ(shrinkSize(64, 0.25), 16);
  EXPECT_EQ(shrinkSize(16384, 0.0625), 1024);
  EXPECT_EQ(shrinkSize(256, 0.3), 64);  // 76.8, kept a multiple of 64 (so of any groups <= 64)
  EXPECT_EQ(shrinkSize(100, 0.5), 52);  // 50, kept a multiple of 4
  EXPECT_EQ(shrinkSize(3, 0.1), 3);     // small values stay
  EXPECT_EQ(shrinkSize(8, 0.5), 8);
  EXPECT_EQ(shrinkSize(9, 0.1), 1);
  EXPECT_EQ(shrinkSize(1000, 1.0), 1000);
}

TEST(BenchShrink, OnlyTopLevelSizeConstantsChange) {
  const std::string source =
      "import torch\n"
      "batch_size = 16\n"
      "kernel_size = 32\n"
      "num_groups = 32\n"
      "channels = 256  # feature maps\n"
      "dim = 1\n"
      "x0_shape = (64, 128)\n"
      "hidden = channels * 4\n"
      "def get_inputs():\n"
      "    size = 1024\n"
      "    return [torch.randn(batch_size, channels)]\n";
  const ShrinkResult r = shrinkSource(source, 0.25);
  EXPECT_EQ(r.changed.size(), 3u);
  EXPECT_NE(r.source.find("# crucible bench --shrink 0.25: 3 size constants scaled"),
            std::string::npos);
  EXPECT_NE(r.source.find("\nbatch_size = 4  # shrunk from 16\n"), std::string::npos);
  EXPECT_NE(r.source.find("\nkernel_size = 32\n"), std::string::npos);
  EXPECT_NE(r.source.find("\nnum_groups = 32\n"), std::string::npos);
  EXPECT_NE(r.source.find("\nchannels = 64  # feature maps  # shrunk from 256\n"),
            std::string::npos);
  EXPECT_NE(r.source.find("\ndim = 1\n"), std::string::npos);
  EXPECT_NE(r.source.find("\nx0_shape = (16, 32)  # shrunk from (64, 128)\n"), std::string::npos);
  EXPECT_NE(r.source.find("\nhidden = channels * 4\n"), std::string::npos);
  EXPECT_NE(r.source.find("\n    size = 1024\n"), std::string::npos);
  EXPECT_EQ(r.changed[0], (ShrunkConstant{"batch_size", 2, "16", "4"}));
  EXPECT_THROW(shrinkSource(source, 0), std::invalid_argument);
  EXPECT_THROW(shrinkSource(source, kMaxScale * 2), std::invalid_argument);
}

TEST(BenchShrink, ScalingUpGrowsTheSameConstantsAndSaysSo) {
  EXPECT_EQ(shrinkSize(16, 4), 64);
  EXPECT_EQ(shrinkSize(100, 2.5), 252);     // 250, kept a multiple of 4
  EXPECT_EQ(shrinkSize(8, 4), 8);           // small values (kernel sizes, counts) stay
  EXPECT_EQ(shrinkSize(1000, 1.01), 1008);  // 1010, kept a multiple of 8
  const ShrinkResult r =
      shrinkSource("batch_size = 16\nkernel_size = 32\nx0_shape = (64, 128)\n", 2);
  EXPECT_EQ(r.changed.size(), 2u);
  EXPECT_NE(r.source.find("# crucible bench --scale 2: 2 size constants scaled"),
            std::string::npos);
  EXPECT_NE(r.source.find("\nbatch_size = 32  # scaled from 16\n"), std::string::npos);
  EXPECT_NE(r.source.find("\nkernel_size = 32\n"), std::string::npos);
  EXPECT_NE(r.source.find("\nx0_shape = (128, 256)  # scaled from (64, 128)\n"), std::string::npos);
  EXPECT_EQ(scaleWord(2), "scaled up");
  EXPECT_EQ(scaleWord(0.5), "shrunk");
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(BenchTaskSet, TheBundledCorpusByLevel) {
  const fs::path corpus = fs::path(CRUCIBLE_TEST_DATA_DIR) / ".." / "resources" / "tasks";
  const auto all = listTasks(corpus);
  EXPECT_GE(all.size(), 55u);
  const auto level2 = listTasks(corpus, parseLevels("2"));
  ASSERT_FALSE(level2.empty());
  for (const auto& t : level2) EXPECT_EQ(t.level, "2");
  EXPECT_EQ(all[0].id, "level1/1_Square_matmul");
  EXPECT_EQ(all[0].problemId, 1);
  EXPECT_EQ(all[0].name, "Square_matmul");
  EXPECT_TRUE(fs::exists(all[0].path));
}

TEST(BenchTaskSet, PlainAndLevelFolders) {
  test::TempDir dir;
  write(dir.path() / "plain" / "10_Ten.py", "");
  write(dir.path() / "plain" / "2_Two.py", "");
  write(dir.path() / "plain" / "__init__.py", "");
  write(dir.path() / "plain" / "notes.txt", "");
  const auto plain = listTasks(dir.path() / "plain");
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].file, "2_Two.py");  // by number, not by text
  EXPECT_EQ(plain[1].name, "Ten");
  EXPECT_EQ(plain[1].level, "");

  write(dir.path() / "kb" / "level2" / "1_Fused.py", "");
  write(dir.path() / "kb" / "level1" / "3_Op.py", "");
  const auto kb = listTasks(dir.path() / "kb");
  ASSERT_EQ(kb.size(), 2u);
  EXPECT_EQ(kb[0].id, "level1/3_Op");
  EXPECT_EQ(kb[1].level, "2");
  EXPECT_EQ(listTasks(dir.path() / "kb", parseLevels("level2")).size(), 1u);
  EXPECT_EQ(parseLevels("1, 2 3"), (std::vector<std::string>{"1", "2", "3"}));

  EXPECT_THROW(listTasks(dir.path() / "missing"), TaskSetError);
  EXPECT_THROW(listTasks(dir.path() / "kb", {"9"}), TaskSetError);
  write(dir.path() / "bad" / "index.json", R"([{"file": "nope.py", "level": 1}])");
  try {
    listTasks(dir.path() / "bad");
    FAIL() << "a missing file in the index is an error";
  } catch (const TaskSetError& e) {
    EXPECT_NE(std::string(e.what()).find("index.json: entry 1"), std::string::npos) << e.what();
  }
}

using crucible::test::sample;

TEST(BenchEvalResults, WrittenAndReadBackWithTheSameMetrics) {
  std::vector<TaskResult> tasks(3);
  tasks[0].problemId = 1;
  tasks[0].file = "level1/1_A.py";
  tasks[0].samples = {sample(false, 2, 1), sample(true, 2, 1, 3)};
  tasks[1].problemId = 4;
  tasks[1].samples = {sample(true, 1, 4)};
  tasks[2].problemId = 5;
  tasks[2].error = "generator: down";
  for (auto& t : tasks) t.chosen = keptSample(t.samples);

  const json file = toEvalResults(tasks, true);
  ASSERT_TRUE(file.contains("1") && file.contains("4") && file.contains("5"));
  const json& first = file["1"][1];
  EXPECT_EQ(first["sample_id"], 1);
  EXPECT_EQ(first["correctness"], true);
  EXPECT_EQ(first["compiled"], true);
  EXPECT_DOUBLE_EQ(first["runtime"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(first["ref_runtime"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(first["speedup"].get<double>(), 2.0);
  EXPECT_EQ(first["metadata"]["shrunk"], true);
  EXPECT_EQ(first["metadata"]["crucible_task"], "level1/1_A.py");
  EXPECT_TRUE(file["5"].empty());

  const auto back = fromEvalResults(json::parse(file.dump()));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].file, "level1/1_A.py");
  EXPECT_EQ(back[0].chosen, 1u);
  EXPECT_EQ(computeMetrics(back, 2), computeMetrics(tasks, 2));
}

TEST(BenchEvalResults, PublishedLayoutsWithABaselineFile) {
  // KernelBench's list-per-problem layout without reference times, its older one-object layout,
  // and a baseline timing file keyed by problem file name.
  const json published = json::parse(R"({
    "2": [{"sample_id": 0, "compiled": true, "correctness": true, "metadata": {},
           "runtime": 0.5, "runtime_stats": {"mean": 0.5}}],
    "1": {"sample_id": 0, "compiled": true, "correctness": true, "metadata": {},
          "runtime": 4.0, "runtime_stats": {}},
    "3": [{"sample_id": 0, "compiled": false, "correctness": false, "metadata": {},
           "runtime": -1.0, "runtime_stats": {}}]
  })");
  const json baseline = json::parse(R"({"level1": {
    "1_Square_matrix_multiplication_.py": {"mean": 2.0},
    "2_Standard_matrix_multiplication_.py": {"mean": 1.0},
    "3_Batched_matrix_multiplication.py": {"mean": 9.0}}})");
  const auto tasks = fromEvalResults(published, baseline, "1");
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].problemId, 1);
  EXPECT_EQ(tasks[0].id, "level1/1");
  EXPECT_DOUBLE_EQ(*tasks[0].kept()->speedup(), 0.5);
  EXPECT_DOUBLE_EQ(*tasks[1].kept()->speedup(), 2.0);
  EXPECT_FALSE(tasks[2].kept()->compiled);
  const Metrics m = computeMetrics(tasks, 1);
  EXPECT_NEAR(m.correctRate, 2.0 / 3, 1e-12);
  EXPECT_NEAR(m.fastP.at("1"), 1.0 / 3, 1e-12);
  EXPECT_NEAR(*m.geomeanSpeedup, 1.0, 1e-12);

  EXPECT_THROW(fromEvalResults(json::parse(R"({"x": []})")), EvalResultsError);
  EXPECT_THROW(fromEvalResults(json::parse(R"({"1": [{"compiled": true}]})")), EvalResultsError);
  EXPECT_THROW(fromEvalResults(json::array()), EvalResultsError);
}

}  // namespace
}  // namespace crucible::bench
