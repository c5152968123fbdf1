#pragma once
// The bubblewrap command line for a sandboxed run. Kept apart from process.cpp so the argv can be
// tested without starting anything.

#include <optional>
#include <string>
#include <vector>

#include "core/proc/process.h"

namespace crucible::proc::sandbox {

/// /usr/bin/bwrap, else the first executable `bwrap` on PATH; nullopt when there is none.
std::optional<std::string> findBubblewrap();

struct BwrapCommand {
  std::vector<std::string> argv;  // bwrap's argv, ending with the child's argv
  std::string error;              // non-empty when the command could not be built
};

/// bwrap's argv for `spec`. statusFd >= 0 asks bwrap to report on that descriptor (in bwrap's
/// own fd table) whether the child was started (`--json-status-fd`).
BwrapCommand bubblewrapCommand(const std::string& bwrapPath, const ProcessSpec& spec, int statusFd);

}  // namespace crucible::proc::sandbox
