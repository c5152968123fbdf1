#pragma once
// A fork server: one long-lived child that starts others by forking itself, so that what it
// loaded once (an interpreter with torch imported) is not loaded again per child. run() starts
// a ProcessSpec through it when the spec names it (ProcessSpec::forkServer); everything else
// about the run stays the same: the pipes, the result channel, the limits, the watchdog, the
// timeout and the kill of the whole process group.
//
// The protocol (the worker's side is core/worker/crucible_worker/fork_server.py): a
// SOCK_SEQPACKET control socket that only this side holds. Each start sends one message, the
// request as JSON (argv after the server's own program, environment, working folder, limits),
// with the descriptors: a connection of the child's own, then stdin, stdout, stderr and the
// result channel. On that connection the child says {"pid": P} once it leads its own session
// and group, and the server later says {"exit": N} or {"signal": S} without reaping it; this
// side answers "reap" after its last kill of the group (or closes the connection).

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/proc/process.h"

namespace crucible::proc {

class ForkServer {
 public:
  /// Starts `spec` (its argv is the server's program followed by `modeArgs`) with the control
  /// socket as its inherited descriptor, named in CRUCIBLE_FORK_SERVER_FD, and waits up to
  /// `readyTimeout` for its hello. nullptr, with `error` set, when it did not start.
  static std::shared_ptr<ForkServer> start(ProcessSpec spec, std::vector<std::string> modeArgs,
                                           std::chrono::milliseconds readyTimeout,
                                           std::string& error);
  ~ForkServer();
  ForkServer(const ForkServer&) = delete;
  ForkServer& operator=(const ForkServer&) = delete;

  /// What the server said when it was ready (its own facts: pid, imports, kernel walls).
  const nlohmann::json& hello() const { return hello_; }
  /// The program a child's argv must start with.
  const std::vector<std::string>& program() const { return program_; }

  struct Spawned {
    int connection = -1;  // owned by the caller: the exit message arrives here
    pid_t pid = -1;       // leads its own session and process group
    std::string error;    // non-empty when nothing was started
  };
  /// Starts `argv` (which begins with program()) with `fds` as its stdin, stdout, stderr and,
  /// when there are four, its result channel.
  Spawned spawn(const std::vector<std::string>& argv, const nlohmann::json& env,
                const std::string& workingDir, const nlohmann::json& limits,
                const std::vector<int>& fds);

  /// Reads the exit message on a child's connection without blocking: true once it came
  /// (exitCode or termSignal set) or the server is gone (lost set).
  static bool readExit(int connection, int& exitCode, int& termSignal, bool& lost);

 private:
  ForkServer() = default;

  std::vector<std::string> program_;
  nlohmann::json hello_;
  int control_ = -1;
  std::mutex sendMutex_;
  std::jthread thread_;  // runs the server until it ends; stopping it kills the server
};

}  // namespace crucible::proc
