#pragma once
// Looking at a process group from outside through /proc: which processes are in it and how much
// resident memory they hold together. Used by the memory watchdog and by tests.

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace crucible::proc {

struct GroupUsage {
  std::vector<pid_t> members;  // every process whose process group is pgid (zombies included)
  std::uint64_t rssBytes = 0;  // sum of their resident sets (shared pages count once per process)
};

/// Scans /proc/*/stat for the processes of group `pgid`. Processes that vanish during the scan are
/// skipped. Cost grows with the number of processes on the machine, not in the group.
GroupUsage scanProcessGroup(pid_t pgid);

}  // namespace crucible::proc
