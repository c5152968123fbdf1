#include "core/util/parallel_chunks.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace crucible {

namespace {
std::atomic<unsigned> configuredThreads{0};
}  // namespace

unsigned maxParallelThreads() {
  const unsigned set = configuredThreads.load(std::memory_order_relaxed);
  return set ? set : std::max(1u, std::thread::hardware_concurrency());
}

void setMaxParallelThreads(unsigned threads) {
  configuredThreads.store(threads, std::memory_order_relaxed);
}

void forEachChunk(std::size_t count, const std::function<void(std::size_t)>& job) {
  const std::size_t threads = std::min<std::size_t>(count, maxParallelThreads());
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) job(i);
    return;
  }
  // Chunks are handed out one at a time from a shared counter: chunks of uneven cost (a slow
  // path taken in one of them) still keep every thread busy.
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex errorMutex;
  auto work = [&] {
    for (std::size_t i; !failed.load(std::memory_order_relaxed) &&
                        (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
      try {
        job(i);
      } catch (...) {
        const std::lock_guard lock(errorMutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones running (this one at least) finish the job
    }
  }
  work();
  for (auto& h : helpers) h.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace crucible
