#pragma once
// Running the chunks of one big job on a few threads: chunk i of n, each chunk touching only
// its own results, so a caller that merges them in chunk order gets the same answer on every
// machine whatever the number of threads.

#include <cstddef>
#include <functional>

namespace crucible {

/// Calls job(i) once for every i in [0, count), on up to maxParallelThreads() threads (the
/// calling one among them); inline when count is 1 or only one thread is allowed, so a small
/// job pays nothing for threads. If a call throws, the chunks not yet started are skipped and
/// the first exception is rethrown once every thread has stopped.
void forEachChunk(std::size_t count, const std::function<void(std::size_t)>& job);

/// How many threads forEachChunk uses: std::thread::hardware_concurrency() unless set.
unsigned maxParallelThreads();
/// Sets that number for the whole process (0: back to hardware_concurrency()); for tests and
/// benchmarks that compare thread counts.
void setMaxParallelThreads(unsigned threads);

}  // namespace crucible
