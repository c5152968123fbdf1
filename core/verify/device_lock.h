#pragma once
// The lock files through which the reference and candidate stages of verifications running at
// the same time take turns on one device: their device work overlaps, their timings do not
// (the worker's side, and why: core/worker/crucible_worker/device_lock.py).

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace crucible {

/// The prefix `DIR/NAME` a reference or candidate job names as its `device_lock` (the worker
/// opens `PREFIX.gate` and `PREFIX.rw`, which this creates), or nullopt when stages on
/// `backend` take no lock.
///
/// CRUCIBLE_DEVICE_LOCK decides: `auto` or unset locks the cuda backend only (on the CPU
/// backends the compiles and comparisons of other jobs share the cores with a timing anyway),
/// `on` every backend, `off` none. DIR is private to this user (`$TMPDIR/crucible-UID-locks`,
/// mode 0700); where it exists but is not a directory this user owns, there is no lock.
std::optional<std::filesystem::path> deviceLockPrefix(const std::string& backend);

/// Holds the lock at `prefix` shared, by the workers' protocol (the gate, then `.rw`), from
/// construction to destruction. The parent's own heavy work takes it: a comparison keeps every
/// core busy, and a cuda timing is partly CPU time (each forward's launches go through Python),
/// so another job's timing must not run beside it. Waits at most `limit`, then goes on without
/// it; with no prefix it holds nothing.
class SharedDeviceHold {
 public:
  explicit SharedDeviceHold(const std::optional<std::filesystem::path>& prefix,
                            std::chrono::milliseconds limit = std::chrono::seconds(120));
  ~SharedDeviceHold();
  SharedDeviceHold(const SharedDeviceHold&) = delete;
  SharedDeviceHold& operator=(const SharedDeviceHold&) = delete;

  bool held() const { return held_; }

 private:
  int gate_ = -1;
  int rw_ = -1;
  bool held_ = false;
};

}  // namespace crucible
