#pragma once
// Running a child process safely: its own process group (killed whole on timeout or cancel),
// resource limits, drained and capped output, an optional sandbox (bubblewrap), and a result
// channel on file descriptor 3 that is not the child's stdout.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace crucible::proc {

class ForkServer;  // fork_server.h

/// Bytes for the stdin of a long-lived child, given while it runs (requests to the model engine).
/// Any thread may write; the thread inside run() hands the bytes over as the child reads them.
class StdinFeed {
 public:
  StdinFeed();
  ~StdinFeed();
  StdinFeed(const StdinFeed&) = delete;
  StdinFeed& operator=(const StdinFeed&) = delete;

  /// Queues bytes; false once the feed is closed.
  bool write(std::string_view bytes);
  /// End of input for the child once what is queued has been written.
  void close();

  // For run(): an eventfd that becomes readable when bytes or the close arrive, and the queue.
  int wakeFd() const { return wake_; }
  std::string take(bool& closed);

 private:
  void wake() const;
  std::mutex mutex_;
  std::string pending_;
  bool closed_ = false;
  int wake_ = -1;
};

struct Limits {
  std::chrono::milliseconds wallTimeout{120'000};
  std::optional<std::uint64_t> memoryBytes;        // resident memory of the whole group (watchdog)
  std::optional<std::uint64_t> addressSpaceBytes;  // RLIMIT_AS; leave unset for CUDA
  std::optional<std::uint64_t> cpuSeconds;         // RLIMIT_CPU
  std::uint64_t fileSizeBytes = 2ULL << 30;        // RLIMIT_FSIZE
  std::size_t outputCapBytes = 256 * 1024;         // per stream; the rest is counted, not kept
};

struct SandboxSpec {
  bool enabled = false;
  std::vector<std::string> readOnlyPaths;  // bound read-only at the same path
  std::vector<std::string> writablePaths;  // bound read-write at the same path
  bool allowGpu = false;                   // bind /dev/nvidia*, /sys, /proc/driver
  // Keep the caller's PID namespace (and the host's /proc): a fork server inside the sandbox
  // reports its children's pids, which the caller signals.
  bool sharePids = false;
};

/// One line the child wrote to the result channel, timestamped on arrival.
struct ChannelLine {
  std::chrono::steady_clock::time_point received;
  std::string text;
};

struct ProcessSpec {
  std::vector<std::string> argv;           // argv[0] resolved to an absolute path by the caller
  std::map<std::string, std::string> env;  // the child's whole environment
  std::string workingDir;
  Limits limits;
  SandboxSpec sandbox;
  bool resultChannel = true;  // give the child fd 3 as the result channel
  std::string stdinText;      // written to the child's stdin, then closed
  // A long-lived child: its stdin stays open and takes what is written to the feed (after
  // stdinText) until the feed is closed.
  std::shared_ptr<StdinFeed> stdinFeed;
  // Called on run()'s thread with stdout's bytes as they arrive; they are then not kept in
  // ExecutionResult::stdoutText (a long-lived child writes without end).
  std::function<void(std::string_view)> onStdout;
  // Called on run()'s thread with each result-channel line as it arrives (it is kept too): a
  // parent that answers the child while it runs.
  std::function<void(const ChannelLine&)> onChannelLine;
  // Called on run()'s thread once the child has started, with its process group's id (the
  // group a parent may pause and resume while another process has the machine to itself).
  std::function<void(int)> onStarted;
  // Time the child spent held up by the parent (paused, or waiting for it on purpose), added to
  // its wall timeout: a child that waits for its turn is not the one running late.
  std::function<std::chrono::milliseconds()> timeNotCounted;
  // A descriptor the child keeps, at the first number after stdin, stdout, stderr and the
  // result channel (a fork server's control socket); -1 for none.
  int inheritedFd = -1;
  // Start the child through this fork server instead of fork and exec (fork_server.h): argv
  // must begin with the server's own program, and the sandbox is the server's.
  std::shared_ptr<ForkServer> forkServer;
};

/// Everything one run of a child produced (Compiler Explorer's ExecutionResult).
struct ExecutionResult {
  int exitCode = -1;   // when it exited normally
  int termSignal = 0;  // when a signal ended it
  bool timedOut = false;
  bool memoryExceeded = false;
  bool cancelled = false;
  bool launchFailed = false;  // could not start at all (launchError says why)
  std::string launchError;
  std::string stdoutText, stderrText;
  std::uint64_t stdoutDropped = 0, stderrDropped = 0;  // bytes beyond the cap
  std::vector<ChannelLine> channel;
  std::uint64_t channelDropped = 0;
  double wallSeconds = 0;
  std::uint64_t peakRssBytes = 0;  // the group's largest resident set seen by the watchdog
  bool sandboxed = false;

  bool exitedCleanly() const { return !launchFailed && termSignal == 0 && exitCode == 0; }
  nlohmann::json toJson() const;  // for logs and facts (channel lines as text)
};

/// Runs the child to completion (or timeout, memory limit, or stop request) and returns what
/// happened. Never throws for anything the child does.
ExecutionResult run(const ProcessSpec& spec, std::stop_token stop = {});

struct SandboxAvailability {
  bool available = false;
  std::string reason;  // why not
};
/// Whether bubblewrap is installed and can create a sandbox here (probed once, cached).
SandboxAvailability probeSandbox();

}  // namespace crucible::proc
