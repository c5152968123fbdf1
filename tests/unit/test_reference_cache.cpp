// The reference cache: runs kept and copied back, copies independent of the cache, links behind
// the walls, eviction and the size limits.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/verify/reference_cache.h"
#include "temp_dir.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A job folder as the reference stage leaves it.
void makeRun(const fs::path& job, const std::string& tag) {
  write(job / "ref" / "expected_0.ctp", "expected " + tag);
  write(job / "inputs" / "inputs_0.ctp", "inputs " + tag);
}

TEST(ReferenceCache, AKeptRunIsCopiedIntoANewJobWithItsFacts) {
  test::TempDir first, second;
  makeRun(first.path(), "a");
  ReferenceCache cache;
  const std::string key = ReferenceCache::keyFor("class Model: ...", {{"seed", 42}});
  EXPECT_FALSE(cache.restore(key, second.path()));
  cache.keep(key, first.path(), {{"timing", {{"eager_ms", 1.5}}}});

  auto facts = cache.restore(key, second.path());
  ASSERT_TRUE(facts);
  EXPECT_EQ((*facts)["timing"]["eager_ms"], 1.5);
  EXPECT_EQ(read(second.path() / "ref" / "expected_0.ctp"), "expected a");
  EXPECT_EQ(read(second.path() / "inputs" / "inputs_0.ctp"), "inputs a");
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(ReferenceCache, AJobThatChangesItsCopyLeavesTheCacheAlone) {
  test::TempDir first, second, third;
  makeRun(first.path(), "a");
  ReferenceCache cache;
  const std::string key = ReferenceCache::keyFor("ref", json::object());
  cache.keep(key, first.path(), json::object());
  ASSERT_TRUE(cache.restore(key, second.path()));
  write(second.path() / "inputs" / "inputs_0.ctp", "mutated by a candidate");
  write(first.path() / "inputs" / "inputs_0.ctp", "changed after keeping");
  ASSERT_TRUE(cache.restore(key, third.path()));
  EXPECT_EQ(read(third.path() / "inputs" / "inputs_0.ctp"), "inputs a");
}

TEST(ReferenceCache, KeysDifferWithTheSourceAndEverySetting) {
  const json settings = {{"backend", "opencl"}, {"seed", 42}, {"trials", 5}};
  const std::string key = ReferenceCache::keyFor("x = 1", settings);
  EXPECT_EQ(key, ReferenceCache::keyFor("x = 1", settings));
  EXPECT_NE(key, ReferenceCache::keyFor("x = 2", settings));
  json otherSeed = settings;
  otherSeed["seed"] = 43;
  EXPECT_NE(key, ReferenceCache::keyFor("x = 1", otherSeed));
  json otherBackend = settings;
  otherBackend["backend"] = "interpret";
  EXPECT_NE(key, ReferenceCache::keyFor("x = 1", otherBackend));
}

TEST(ReferenceCache, TheLeastRecentlyUsedRunIsEvictedBeyondTheLimit) {
  test::TempDir a, b, c, out;
  makeRun(a.path(), "a");
  makeRun(b.path(), "b");
  makeRun(c.path(), "c");
  ReferenceCache cache(2);
  cache.keep("a", a.path(), json::object());
  cache.keep("b", b.path(), json::object());
  ASSERT_TRUE(cache.restore("a", out.path()));  // a is now the most recently used
  cache.keep("c", c.path(), json::object());
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.restore("a", out.path()));
  EXPECT_FALSE(cache.restore("b", out.path()));
  EXPECT_TRUE(cache.restore("c", out.path()));
}

TEST(ReferenceCache, RunsLargerThanTheLimitAreNotKept) {
  test::TempDir big, out;
  write(big.path() / "ref" / "expected_0.ctp", std::string(4096, 'x'));
  ReferenceCache cache(8, 1024);
  cache.keep("big", big.path(), json::object());
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.restore("big", out.path()));
}

TEST(ReferenceCache, BehindWallsARunIsLinkedNotCopiedAndMayBeLarger) {
  test::TempDir big, out, later;
  write(big.path() / "ref" / "expected_0.ctp", std::string(4096, 'x'));
  write(big.path() / "inputs" / "timing_0.ctp", "timing");
  ReferenceCache cache(8, 1024, 1 << 20);
  cache.keep("copied", big.path(), json::object(), false);
  EXPECT_EQ(cache.size(), 0u);  // over the copy limit
  cache.keep("linked", big.path(), json::object(), true);
  ASSERT_TRUE(cache.restore("linked", out.path()));
  // The same file, not a copy of it: the job's, the cache's and the restored job's.
  EXPECT_TRUE(
      fs::equivalent(big.path() / "ref" / "expected_0.ctp", out.path() / "ref" / "expected_0.ctp"));
  EXPECT_EQ(fs::hard_link_count(out.path() / "inputs" / "timing_0.ctp"), 3u);
  // Removing a job (its links) leaves the run whole for the next one.
  fs::remove_all(big.path() / "ref");
  fs::remove_all(out.path() / "inputs");
  ASSERT_TRUE(cache.restore("linked", later.path()));
  EXPECT_EQ(read(later.path() / "ref" / "expected_0.ctp"), std::string(4096, 'x'));
  EXPECT_EQ(read(later.path() / "inputs" / "timing_0.ctp"), "timing");
}

}  // namespace
}  // namespace crucible
