#pragma once
// Ctrl-C and SIGTERM for long commands: the signals are blocked in every thread and a watcher
// thread turns the first one into a stop request, so the command stops cleanly (its child
// processes killed, its files whole) instead of dying mid-write.

#include <stop_token>

namespace crucible::cli {

/// The stop source the signals trigger.
std::stop_source& interruptSource();

/// Starts watching for SIGINT and SIGTERM; call once, before any other thread starts.
void watchForInterrupt();

}  // namespace crucible::cli
