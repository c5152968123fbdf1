#pragma once
// The fork server that starts worker stages (core/proc/fork_server.h, the worker's
// fork_server.py): torch is imported once per Crucible process and backend, and every stage is
// a child forked from it that raises the kernel's walls (Landlock, seccomp) itself before any
// user code exists. Where those walls cannot be complete, stages start the classic way: a
// fresh interpreter per stage, inside bubblewrap of its own.

#include <memory>
#include <string>
#include <vector>

#include "core/proc/fork_server.h"
#include "core/util/locations.h"

namespace crucible {

/// Where job folders go: a private folder under the temporary root, the part of it a fork
/// server's sandbox shows (the rest of /tmp, with the desktop's sockets, stays outside).
std::string jobsRoot();

/// A started server and what its sandbox shows.
struct StageServer {
  std::shared_ptr<proc::ForkServer> server;
  std::vector<std::string> view;  // the folders it sees; empty: the whole file system
  bool sees(const std::vector<std::string>& paths) const;
};

/// The server for `backend`'s stages, started on first use and kept while this process lives;
/// nullptr where stages start the classic way: CRUCIBLE_FORK_SERVER=0, a kernel whose Landlock
/// cannot scope signals and abstract sockets (below ABI 6), or a server that did not start.
std::shared_ptr<const StageServer> stageForkServer(const WorkerLocation& worker,
                                                   const std::string& backend,
                                                   const std::string& tclLibrary);

/// No more stages through fork servers in this process (a forked stage could not raise its
/// walls), with the reason for the log.
void retireStageForkServers(const std::string& why);

}  // namespace crucible
