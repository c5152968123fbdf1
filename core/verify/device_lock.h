#pragma once
// The lock files through which the reference and candidate stages of verifications running at
// the same time take turns on one device: their device work overlaps, their timings do not
// (the worker's side, and why: core/worker/crucible_worker/device_lock.py).

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

}  // namespace crucible
