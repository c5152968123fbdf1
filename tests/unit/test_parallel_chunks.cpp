// forEachChunk: every chunk exactly once, on the calling thread alone when one thread is
// allowed, and a chunk's exception back to the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/util/parallel_chunks.h"

namespace crucible {
namespace {

class ParallelChunks : public ::testing::Test {
 protected:
  void TearDown() override { setMaxParallelThreads(0); }
};

TEST_F(ParallelChunks, EveryChunkRunsOnce) {
  for (unsigned threads : {1u, 2u, 7u}) {
    setMaxParallelThreads(threads);
    std::vector<std::atomic<int>> runs(1000);
    forEachChunk(runs.size(), [&](std::size_t i) { ++runs[i]; });
    for (std::size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << i;
  }
  forEachChunk(0, [](std::size_t) { FAIL() << "no chunk to run"; });
}

TEST_F(ParallelChunks, OneThreadOrOneChunkRunsOnTheCaller) {
  const auto caller = std::this_thread::get_id();
  setMaxParallelThreads(1);
  forEachChunk(50, [&](std::size_t) { EXPECT_EQ(std::this_thread::get_id(), caller); });
  setMaxParallelThreads(8);
  forEachChunk(1, [&](std::size_t) { EXPECT_EQ(std::this_thread::get_id(), caller); });
}

TEST_F(ParallelChunks, SeveralThreadsShareTheWork) {
  setMaxParallelThreads(4);
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int> waiting{0};
  // Each of the first four chunks waits until four are running at once: it can only end if
  // four threads took part.
  forEachChunk(4, [&](std::size_t) {
    {
      const std::lock_guard lock(m);
      ids.insert(std::this_thread::get_id());
    }
    ++waiting;
    while (waiting.load() < 4) std::this_thread::yield();
  });
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_EQ(maxParallelThreads(), 4u);
  setMaxParallelThreads(0);
  EXPECT_GE(maxParallelThreads(), 1u);
}

TEST_F(ParallelChunks, AChunksExceptionReachesTheCaller) {
  for (unsigned threads : {1u, 3u}) {
    setMaxParallelThreads(threads);
    std::atomic<int> ran{0};
    EXPECT_THROW(forEachChunk(100000,
                              [&](std::size_t i) {
                                ++ran;
                                if (i == 10) throw std::runtime_error("chunk 10");
                              }),
                 std::runtime_error);
    EXPECT_LT(ran.load(), 100000);  // the chunks not started were skipped
  }
}

}  // namespace
}  // namespace crucible
