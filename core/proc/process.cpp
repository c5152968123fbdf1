#include "core/proc/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <mutex>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/proc/fork_server.h"
#include "core/proc/process_group.h"
#include "core/proc/sandbox.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace crucible::proc {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t kChannelCapBytes = 64u << 20;
constexpr std::size_t kChunkBytes = 64u << 10;
// /proc is scanned often only when a memory limit needs enforcing; otherwise the scan only feeds
// peakRssBytes (which wait4's ru_maxrss also feeds), so it can be rarer.
constexpr auto kWatchdogPeriodWithLimit = 50ms;
constexpr auto kWatchdogPeriodWithoutLimit = 200ms;
// After a kill, the group is killed again at this period until the leader is gone, so a process
// forked while the first signal was in flight cannot survive.
constexpr auto kRekillPeriod = 100ms;
// Without a pidfd, how often the leader's exit is polled.
constexpr auto kExitPollPeriod = 10ms;
// Once the leader is reaped, how long to keep reading pipes that a process outside the group
// (one that called setsid itself) may still hold open.
constexpr auto kDrainGrace = 250ms;

std::string errorText(int err) {
  return std::system_category().message(err);
}

/// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

// Both ends close-on-exec: the child gets its ends through dup2, which clears the flag, so no
// other child started concurrently from another thread keeps them past its exec.
std::optional<Pipe> makePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

void setNonBlocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// ---------------------------------------------------------------------------------------------
// The child between fork and exec. Everything is prepared before fork; only async-signal-safe
// calls happen here because other threads of the parent may have held locks (malloc's included)
// at the moment of the fork.

enum class ChildStage : int { Fds, Setsid, Rlimit, Chdir, Exec };

struct ChildFailure {
  int stage;
  int error;
};

struct FdMove {
  int from, to;
};

struct RlimitSetting {
  int resource;
  rlimit value;
};

struct ChildPlan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* chdirTo = nullptr;  // nullptr: keep the parent's working directory
  std::array<FdMove, 6> moves{};  // targets are 0, 1, 2, ... in order
  int moveCount = 0;
  std::array<RlimitSetting, 4> limits{};
  int limitCount = 0;
  int statusFd = -1;  // close-on-exec: EOF tells the parent that exec succeeded
  pid_t parentPid = 0;
};

[[noreturn]] void failChild(int statusFd, ChildStage stage, int err) {
  const ChildFailure failure{static_cast<int>(stage), err};
  [[maybe_unused]] const auto n = ::write(statusFd, &failure, sizeof failure);
  ::_exit(127);
}

// The child inherits the forking thread's mask (which blocks SIGPIPE during run()) and every
// ignored disposition; exec keeps both, so they are reset to what a fresh program expects.
void resetSignals() {
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  }
}

// Every descriptor from `first` up is closed at exec (not now: the status pipe must survive until
// exec). close_range needs Linux 5.11; older kernels get a loop.
void closeOnExecFrom(int first) {
  if (::syscall(SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  rlimit nofile{};
  long last = 65536;
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
    last = static_cast<long>(std::min<rlim_t>(nofile.rlim_cur, 1 << 20));
  }
  for (long fd = first; fd < last; ++fd) {
    const int flags = ::fcntl(static_cast<int>(fd), F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) {
      ::fcntl(static_cast<int>(fd), F_SETFD, flags | FD_CLOEXEC);
    }
  }
}

[[noreturn]] void runChild(const ChildPlan& plan) noexcept {
  resetSignals();
  // Move every descriptor the child keeps above the target range first, so that a source that
  // happens to be 0..4 (the parent may have closed its stdin) is not overwritten by a dup2.
  const int status = ::fcntl(plan.statusFd, F_DUPFD_CLOEXEC, 10);
  if (status < 0) failChild(plan.statusFd, ChildStage::Fds, errno);
  if (::setsid() < 0) failChild(status, ChildStage::Setsid, errno);
  // If Crucible dies, its direct child dies too (bwrap then takes the sandbox down with it).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != plan.parentPid) ::_exit(127);

  std::array<int, 6> high{};
  for (int i = 0; i < plan.moveCount; ++i) {
    high[i] = ::fcntl(plan.moves[i].from, F_DUPFD_CLOEXEC, 10);
    if (high[i] < 0) failChild(status, ChildStage::Fds, errno);
  }
  for (int i = 0; i < plan.moveCount; ++i) {
    if (::dup2(high[i], plan.moves[i].to) < 0) failChild(status, ChildStage::Fds, errno);
  }
  closeOnExecFrom(plan.moveCount);

  for (int i = 0; i < plan.limitCount; ++i) {
    if (::setrlimit(plan.limits[i].resource, &plan.limits[i].value) != 0) {
      failChild(status, ChildStage::Rlimit, errno);
    }
  }
  if (plan.chdirTo != nullptr && ::chdir(plan.chdirTo) != 0) {
    failChild(status, ChildStage::Chdir, errno);
  }
  ::execve(plan.path, plan.argv, plan.envp);
  failChild(status, ChildStage::Exec, errno);
}

// ---------------------------------------------------------------------------------------------
// The parent.

/// Blocks SIGPIPE in the calling thread while run() writes the child's stdin, so a child that
/// closes its stdin early yields EPIPE instead of killing Crucible; a SIGPIPE raised meanwhile is
/// consumed before the old mask returns. Per thread: no process-wide disposition is touched.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigset_t pending;
    ::sigemptyset(&pending);
    ::sigpending(&pending);
    wasPending_ = ::sigismember(&pending, SIGPIPE) == 1;
    ::pthread_sigmask(SIG_BLOCK, &pipeSet(), &old_);
  }
  ~SigpipeGuard() {
    if (sawEpipe_ && !wasPending_) {
      const timespec zero{};
      while (::sigtimedwait(&pipeSet(), nullptr, &zero) == SIGPIPE) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;
  void sawEpipe() { sawEpipe_ = true; }

 private:
  static const sigset_t& pipeSet() {
    static const sigset_t set = [] {
      sigset_t s;
      ::sigemptyset(&s);
      ::sigaddset(&s, SIGPIPE);
      return s;
    }();
    return set;
  }
  sigset_t old_{};
  bool wasPending_ = false;
  bool sawEpipe_ = false;
};

/// A stream kept up to a cap; what does not fit is counted.
struct CappedText {
  std::string& text;
  std::uint64_t& dropped;
  std::size_t cap;

  void append(const char* data, std::size_t n) {
    const std::size_t room = text.size() < cap ? cap - text.size() : 0;
    const std::size_t keep = std::min(room, n);
    text.append(data, keep);
    dropped += n - keep;
  }
};

/// Splits the result channel into lines, each stamped when its newline arrived.
class ChannelReader {
 public:
  ChannelReader(ExecutionResult& result, const ProcessSpec& spec) : result_(result), spec_(spec) {}

  void append(const char* data, std::size_t n, Clock::time_point now) {
    const std::size_t room = kept_ < kChannelCapBytes ? kChannelCapBytes - kept_ : 0;
    const std::size_t keep = std::min(room, n);
    result_.channelDropped += n - keep;
    kept_ += keep;
    partial_.append(data, keep);
    std::size_t start = 0;
    for (auto nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', start)) {
      result_.channel.push_back({now, partial_.substr(start, nl - start)});
      if (spec_.onChannelLine) spec_.onChannelLine(result_.channel.back());
      start = nl + 1;
    }
    partial_.erase(0, start);
  }

  /// A last line without a newline still counts once the channel is closed.
  void finish(Clock::time_point now) {
    if (!partial_.empty()) {
      result_.channel.push_back({now, std::move(partial_)});
      if (spec_.onChannelLine) spec_.onChannelLine(result_.channel.back());
    }
    partial_.clear();
  }

 private:
  ExecutionResult& result_;
  const ProcessSpec& spec_;
  std::string partial_;
  std::size_t kept_ = 0;
};

std::string describeFailure(const ChildFailure& failure, const ProcessSpec& spec,
                            const std::string& path) {
  const std::string why = errorText(failure.error);
  switch (static_cast<ChildStage>(failure.stage)) {
    case ChildStage::Fds:
      return "could not set up the child's file descriptors: " + why;
    case ChildStage::Setsid:
      return "could not start a new session: " + why;
    case ChildStage::Rlimit:
      return "could not set resource limits: " + why;
    case ChildStage::Chdir:
      return "could not change to " + spec.workingDir + ": " + why;
    case ChildStage::Exec:
      return "could not execute " + path + ": " + why;
  }
  return "child setup failed: " + why;
}

std::optional<RlimitSetting> limitSetting(int resource, rlim_t soft, rlim_t hard) {
  rlimit current{};
  if (::getrlimit(resource, &current) != 0) return std::nullopt;
  // An unprivileged process cannot raise its hard limit: never ask for more than it has.
  hard = std::min(hard, current.rlim_max);
  soft = std::min(soft, hard);
  return RlimitSetting{resource, {soft, hard}};
}

/// Where bubblewrap is and whether it has --json-status-fd (bubblewrap 0.5 and later); looked up
/// once per process.
struct BubblewrapInstall {
  std::optional<std::string> path;
  bool jsonStatus = false;
};

const BubblewrapInstall& bubblewrap() {
  static const BubblewrapInstall install = [] {
    BubblewrapInstall found;
    found.path = sandbox::findBubblewrap();
    if (found.path) {
      ProcessSpec help;
      help.argv = {*found.path, "--help"};
      help.resultChannel = false;
      help.limits.wallTimeout = std::chrono::seconds(10);
      found.jsonStatus = run(help).stdoutText.find("--json-status-fd") != std::string::npos;
    }
    return found;
  }();
  return install;
}

/// Everything about one run; the members outlive the child's use of the plan's pointers.
class Runner {
 public:
  Runner(const ProcessSpec& spec, std::stop_token stop) : spec_(spec), stop_(std::move(stop)) {}

  ExecutionResult run() {
    if (!prepare()) return std::move(result_);
    if (stop_.stop_requested()) {
      result_.cancelled = true;
      return std::move(result_);
    }
    SigpipeGuard sigpipe;
    if (!launch()) return std::move(result_);
    superviseUntilExit(sigpipe);
    reapAndDrain();
    interpretStatus();
    return std::move(result_);
  }

 private:
  bool fail(std::string why) {
    result_.launchFailed = true;
    result_.launchError = std::move(why);
    return false;
  }

  // --- before fork ---------------------------------------------------------------------------

  bool prepare() {
    if (spec_.argv.empty()) return fail("no program given (argv is empty)");
    const std::string& program = spec_.argv.front();
    if (program.empty() || program.front() != '/') {
      return fail("argv[0] must be an absolute path: '" + program + "'");
    }
    if (::access(program.c_str(), X_OK) != 0) {
      return fail("cannot execute " + program + ": " + errorText(errno));
    }
    if (!buildCommand()) return false;
    if (!openPipes()) return false;
    buildEnv();
    buildPlan();
    return true;
  }

  bool openPipes() {
    auto in = makePipe(), out = makePipe(), err = makePipe(), status = makePipe();
    if (!in || !out || !err || !status) return fail("could not create pipes: " + errorText(errno));
    stdin_ = std::move(*in);
    stdout_ = std::move(*out);
    stderr_ = std::move(*err);
    execStatus_ = std::move(*status);
    if (spec_.resultChannel) {
      auto channel = makePipe();
      if (!channel) return fail("could not create pipes: " + errorText(errno));
      channel_ = std::move(*channel);
    }
    if (bwrapStatusWanted_) {
      auto bwrapStatus = makePipe();
      if (!bwrapStatus) return fail("could not create pipes: " + errorText(errno));
      bwrapStatus_ = std::move(*bwrapStatus);
    }
    return true;
  }

  int bwrapStatusTarget() const {
    return 3 + (spec_.resultChannel ? 1 : 0) + (spec_.inheritedFd >= 0 ? 1 : 0);
  }

  bool buildCommand() {
    if (spec_.forkServer && spec_.sandbox.enabled) {
      return fail("a fork server's children live in the server's sandbox, not one of their own");
    }
    if (!spec_.sandbox.enabled) {
      argStore_ = spec_.argv;
      return true;
    }
    const auto& bwrap = bubblewrap();
    if (!bwrap.path) {
      return fail("a sandbox was requested but bubblewrap (bwrap) is not in /usr/bin or on PATH");
    }
    bwrapStatusWanted_ = bwrap.jsonStatus;
    auto cmd = sandbox::bubblewrapCommand(*bwrap.path, spec_,
                                          bwrapStatusWanted_ ? bwrapStatusTarget() : -1);
    if (!cmd.error.empty()) return fail("sandbox: " + cmd.error);
    argStore_ = std::move(cmd.argv);
    result_.sandboxed = true;
    return true;
  }

  void buildEnv() {
    for (const auto& [key, value] : spec_.env) envStore_.push_back(key + "=" + value);
    if (spec_.resultChannel && !spec_.env.contains("CRUCIBLE_RESULT_FD")) {
      envStore_.emplace_back("CRUCIBLE_RESULT_FD=3");
    }
    for (auto& a : argStore_) argPtrs_.push_back(a.data());
    argPtrs_.push_back(nullptr);
    for (auto& e : envStore_) envPtrs_.push_back(e.data());
    envPtrs_.push_back(nullptr);
  }

  void buildPlan() {
    plan_.path = argStore_.front().c_str();
    plan_.argv = argPtrs_.data();
    plan_.envp = envPtrs_.data();
    // Inside a sandbox bwrap changes directory (--chdir) after its mounts.
    if (!spec_.sandbox.enabled && !spec_.workingDir.empty())
      plan_.chdirTo = spec_.workingDir.c_str();
    auto move = [&](int fd) {
      const int target = plan_.moveCount++;  // 0, 1, 2, then the others present, in order
      plan_.moves[target] = {fd, target};
    };
    move(stdin_.read.get());
    move(stdout_.write.get());
    move(stderr_.write.get());
    if (spec_.resultChannel) move(channel_.write.get());
    if (spec_.inheritedFd >= 0) move(spec_.inheritedFd);
    if (bwrapStatusWanted_) move(bwrapStatus_.write.get());
    plan_.statusFd = execStatus_.write.get();
    plan_.parentPid = ::getpid();

    const auto& limits = spec_.limits;
    auto addLimit = [&](int resource, rlim_t soft, rlim_t hard) {
      if (auto s = limitSetting(resource, soft, hard)) plan_.limits[plan_.limitCount++] = *s;
    };
    addLimit(RLIMIT_CORE, 0, 0);
    addLimit(RLIMIT_FSIZE, limits.fileSizeBytes, limits.fileSizeBytes);
    // The soft CPU limit sends SIGXCPU; the hard one a second later is SIGKILL for a child that
    // catches it.
    if (limits.cpuSeconds) addLimit(RLIMIT_CPU, *limits.cpuSeconds, *limits.cpuSeconds + 1);
    if (limits.addressSpaceBytes) {
      addLimit(RLIMIT_AS, *limits.addressSpaceBytes, *limits.addressSpaceBytes);
    }
  }

  // --- fork and exec -------------------------------------------------------------------------

  bool launch() {
    if (spec_.forkServer) return launchThroughServer();
    start_ = Clock::now();
    pid_ = ::fork();
    if (pid_ < 0) return fail("fork failed: " + errorText(errno));
    if (pid_ == 0) runChild(plan_);

    closeChildEnds();
    if (!awaitExec()) return false;

    pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
    return started();
  }

  /// The parent keeps only its ends; the child's copies are what signal EOF later.
  void closeChildEnds() {
    stdin_.read.reset();
    stdout_.write.reset();
    stderr_.write.reset();
    channel_.write.reset();
    bwrapStatus_.write.reset();
    execStatus_.write.reset();
  }

  /// The fork server forks the child: the same descriptors, environment, folder and limits as
  /// fork and exec would give, and a connection on which its exit is reported.
  bool launchThroughServer() {
    start_ = Clock::now();
    std::vector<int> fds{stdin_.read.get(), stdout_.write.get(), stderr_.write.get()};
    if (spec_.resultChannel) fds.push_back(channel_.write.get());
    nlohmann::json env = nlohmann::json::object();
    for (const auto& entry : envStore_) {
      const auto eq = entry.find('=');
      env[entry.substr(0, eq)] = eq == std::string::npos ? "" : entry.substr(eq + 1);
    }
    nlohmann::json limits = nlohmann::json::array();
    for (int i = 0; i < plan_.limitCount; ++i) {
      const auto& l = plan_.limits[i];
      limits.push_back({l.resource, l.value.rlim_cur, l.value.rlim_max});
    }
    const std::string cwd = spec_.workingDir.empty() ? "/" : spec_.workingDir;
    auto spawned = spec_.forkServer->spawn(spec_.argv, env, cwd, limits, fds);
    closeChildEnds();
    if (!spawned.error.empty()) return fail("fork server: " + spawned.error);
    pid_ = spawned.pid;
    serverConnection_.reset(spawned.connection);
    return started();
  }

  bool started() {
    wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    for (const Fd* fd : {&stdout_.read, &stderr_.read, &channel_.read, &bwrapStatus_.read}) {
      if (fd->valid()) setNonBlocking(fd->get());
    }
    stdinPending_ = spec_.stdinText;
    stdinEnded_ = !spec_.stdinFeed;
    setNonBlocking(stdin_.write.get());
    takeFeed();
    if (spec_.onStarted) spec_.onStarted(pid_);
    return true;
  }

  /// Moves what the feed was given to the bytes waiting for the child's stdin; closes stdin once
  /// everything was written and no more will come.
  void takeFeed() {
    if (spec_.stdinFeed) {
      std::uint64_t count;
      [[maybe_unused]] const auto r = ::read(spec_.stdinFeed->wakeFd(), &count, sizeof count);
      bool closed = false;
      stdinPending_.erase(0, stdinOffset_);
      stdinOffset_ = 0;
      stdinPending_ += spec_.stdinFeed->take(closed);
      stdinEnded_ = stdinEnded_ || closed;
    }
    if (stdinEnded_ && stdinOffset_ == stdinPending_.size()) stdin_.write.reset();
  }

  // The status pipe stays open until exec (close-on-exec) or carries why the child gave up.
  bool awaitExec() {
    ChildFailure failure{};
    ssize_t got;
    do {
      got = ::read(execStatus_.read.get(), &failure, sizeof failure);
    } while (got < 0 && errno == EINTR);
    execStatus_.read.reset();
    if (got == 0) return true;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    if (got != static_cast<ssize_t>(sizeof failure)) return fail("the child failed before exec");
    return fail(describeFailure(failure, spec_, argStore_.front()));
  }

  // --- supervision ---------------------------------------------------------------------------

  void signalGroup() {
    // pgid == pid (the child called setsid). Only while the leader is unreaped: its pid, and so
    // the group id, cannot be reused by an unrelated process until then.
    if (!leaderLost_) ::kill(-pid_, SIGKILL);
    lastKill_ = Clock::now();
  }

  /// Ends the run early (timeout, memory, cancel).
  void killGroup() {
    killed_ = true;
    signalGroup();
  }

  bool leaderExited() {
    if (spec_.forkServer) {
      if (serverSaidExit_ || leaderLost_) return true;
      int code = -1, signal = 0;
      bool lost = false;
      if (!ForkServer::readExit(serverConnection_.get(), code, signal, lost)) return false;
      leaderLost_ = lost;
      serverSaidExit_ = !lost;
      if (!lost) waitStatus_ = signal != 0 ? signal : (code & 0xff) << 8;
      return true;
    }
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) return false;
      leaderLost_ = true;  // ECHILD: reaped by someone else (a waitpid(-1) elsewhere)
      return true;
    }
    return info.si_pid == pid_;
  }

  void watchMemory(Clock::time_point now) {
    const auto usage = scanProcessGroup(pid_);
    result_.peakRssBytes = std::max(result_.peakRssBytes, usage.rssBytes);
    const auto& limit = spec_.limits.memoryBytes;
    if (limit && usage.rssBytes > *limit && !killed_) {
      result_.memoryExceeded = true;
      killGroup();
    }
    nextWatch_ = now + (limit ? kWatchdogPeriodWithLimit : kWatchdogPeriodWithoutLimit);
  }

  void enforce(Clock::time_point now) {
    if (killed_) {
      if (now - lastKill_ >= kRekillPeriod) signalGroup();
      return;
    }
    if (stop_.stop_requested()) {
      result_.cancelled = true;
      killGroup();
    } else if (now >= deadline()) {
      result_.timedOut = true;
      killGroup();
    } else if (now >= nextWatch_) {
      watchMemory(now);
    }
  }

  Clock::time_point deadline() const {
    return spec_.timeNotCounted ? deadline_ + spec_.timeNotCounted() : deadline_;
  }

  int pollTimeoutMs(Clock::time_point now) const {
    auto until = killed_ ? lastKill_ + kRekillPeriod : std::min(deadline(), nextWatch_);
    if (!pidfd_.valid() && !serverConnection_.valid()) {
      until = std::min(until, now + kExitPollPeriod);
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(until - now);
    return static_cast<int>(std::clamp<std::int64_t>(wait.count(), 0, 1000));
  }

  void superviseUntilExit(SigpipeGuard& sigpipe) {
    // Clamped so that a "no limit" value such as milliseconds::max() cannot overflow the clock.
    deadline_ = start_ + std::min<std::chrono::milliseconds>(spec_.limits.wallTimeout, 24h * 365);
    nextWatch_ = start_ + kWatchdogPeriodWithLimit;
    std::stop_callback onStop(stop_, [fd = wake_.get()] {
      const std::uint64_t one = 1;
      [[maybe_unused]] const auto n = ::write(fd, &one, sizeof one);
    });
    while (!leaderExited()) {
      const auto now = Clock::now();
      enforce(now);
      pollOnce(pollTimeoutMs(now), &sigpipe);
    }
    stdin_.write.reset();
  }

  bool outputOpen() const {
    return stdout_.read.valid() || stderr_.read.valid() || channel_.read.valid() ||
           bwrapStatus_.read.valid();
  }

  /// One poll over the output pipes and, while the child runs (sigpipe given), its stdin, its
  /// pidfd and the stop wake-up.
  void pollOnce(int timeoutMs, SigpipeGuard* sigpipe) {
    std::array<pollfd, 8> fds{};
    std::array<Fd*, 8> owners{};
    std::size_t n = 0;
    auto watch = [&](Fd& fd, short events) {
      if (!fd.valid()) return;
      fds[n] = {fd.get(), events, 0};
      owners[n++] = &fd;
    };
    for (Fd* fd : {&stdout_.read, &stderr_.read, &channel_.read, &bwrapStatus_.read}) {
      watch(*fd, POLLIN);
    }
    if (sigpipe != nullptr) {
      if (stdinOffset_ < stdinPending_.size()) watch(stdin_.write, POLLOUT);
      watch(pidfd_, POLLIN);
      watch(serverConnection_, POLLIN);
      watch(wake_, POLLIN);
      if (spec_.stdinFeed && stdin_.write.valid()) {
        fds[n] = {spec_.stdinFeed->wakeFd(), POLLIN, 0};
        owners[n++] = nullptr;  // the feed owns its descriptor
      }
    }
    if (::poll(fds.data(), n, timeoutMs) <= 0) return;
    for (std::size_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (owners[i] == nullptr) {
        takeFeed();
        continue;
      }
      Fd& fd = *owners[i];
      if (&fd == &stdin_.write) {
        writeStdin(*sigpipe, fds[i].revents);
      } else if (&fd == &wake_) {
        std::uint64_t count;
        [[maybe_unused]] const auto r = ::read(fd.get(), &count, sizeof count);
      } else if (&fd != &pidfd_ && &fd != &serverConnection_) {
        readFrom(fd);
      }
    }
  }

  void writeStdin(SigpipeGuard& sigpipe, short revents) {
    if (revents & (POLLERR | POLLHUP | POLLNVAL)) {
      stdin_.write.reset();  // the child closed its end: the rest is not wanted
      return;
    }
    const auto& text = stdinPending_;
    const std::size_t len = std::min(kChunkBytes, text.size() - stdinOffset_);
    const ssize_t wrote = ::write(stdin_.write.get(), text.data() + stdinOffset_, len);
    if (wrote > 0) stdinOffset_ += static_cast<std::size_t>(wrote);
    if (wrote < 0 && errno == EPIPE) sigpipe.sawEpipe();
    if (wrote < 0 && errno != EAGAIN && errno != EINTR) {
      stdin_.write.reset();  // the child stopped reading
    } else if (stdinOffset_ == text.size() && stdinEnded_) {
      stdin_.write.reset();  // all written: EOF tells the child
    }
  }

  void readFrom(Fd& fd) {
    char buf[kChunkBytes];
    const ssize_t got = ::read(fd.get(), buf, sizeof buf);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    const auto now = Clock::now();
    if (got <= 0) {
      if (&fd == &channel_.read) channelReader_.finish(now);
      fd.reset();
      return;
    }
    const auto n = static_cast<std::size_t>(got);
    const std::size_t cap = spec_.limits.outputCapBytes;
    if (&fd == &stdout_.read && spec_.onStdout) {
      spec_.onStdout(std::string_view(buf, n));
    } else if (&fd == &stdout_.read) {
      CappedText{result_.stdoutText, result_.stdoutDropped, cap}.append(buf, n);
    } else if (&fd == &stderr_.read) {
      CappedText{result_.stderrText, result_.stderrDropped, cap}.append(buf, n);
    } else if (&fd == &channel_.read) {
      channelReader_.append(buf, n, now);
    } else {
      std::uint64_t ignored = 0;
      CappedText{bwrapStatusText_, ignored, 64 * 1024}.append(buf, n);
    }
  }

  // --- the end -------------------------------------------------------------------------------

  void reapAndDrain() {
    // The leader is a zombie now: its group id is still reserved, so this last kill reaches only
    // the processes it left behind (a background job, a daemon it forked) and none of them
    // outlives the run as an orphan.
    signalGroup();
    rusage usage{};
    if (spec_.forkServer) {
      // The server reaps it now; the group was killed while the leader still reserved it.
      if (serverConnection_.valid()) {
        [[maybe_unused]] const auto n = ::send(serverConnection_.get(), "reap", 4, MSG_NOSIGNAL);
      }
      serverConnection_.reset();
    } else {
      while (!leaderLost_ && ::wait4(pid_, &waitStatus_, 0, &usage) < 0 && errno == EINTR) {
      }
    }
    result_.wallSeconds = std::chrono::duration<double>(Clock::now() - start_).count();
    result_.peakRssBytes =
        std::max(result_.peakRssBytes, static_cast<std::uint64_t>(usage.ru_maxrss) * 1024);

    // What is still in the pipes is read to EOF; a writer outside the group gets a short grace.
    const auto graceEnd = Clock::now() + kDrainGrace;
    for (auto now = Clock::now(); outputOpen() && now < graceEnd; now = Clock::now()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(graceEnd - now).count();
      pollOnce(static_cast<int>(left), nullptr);
    }
    channelReader_.finish(Clock::now());
  }

  void interpretStatus() {
    if (leaderLost_) return;  // its status went to whoever reaped it
    if (WIFEXITED(waitStatus_)) {
      result_.exitCode = WEXITSTATUS(waitStatus_);
    } else if (WIFSIGNALED(waitStatus_)) {
      result_.termSignal = WTERMSIG(waitStatus_);
    }
    if (result_.sandboxed) interpretSandboxStatus();
  }

  // bwrap writes {"exit-code": N} once the sandboxed program has run; without that line (and
  // without a kill from here) bwrap itself failed, e.g. a mount it could not make or user
  // namespaces refused. This comes from bwrap's own descriptor, which the sandboxed program does
  // not have, so a candidate cannot pass its failure off as an infrastructure one by printing
  // "bwrap:" lines. (A bwrap too old for --json-status-fd cannot tell; its runs count as run.)
  // bwrap reports a child killed by signal S as exit code 128 + S.
  void interpretSandboxStatus() {
    const bool childRan =
        !bwrapStatusWanted_ || bwrapStatusText_.find("\"exit-code\"") != std::string::npos;
    if (!childRan && !killed_) {
      result_.launchFailed = true;
      result_.launchError = "bubblewrap could not start the sandbox: " + bwrapMessage();
      return;
    }
    if (result_.exitCode > 128 && result_.exitCode - 128 < NSIG) {
      result_.termSignal = result_.exitCode - 128;
      result_.exitCode = -1;
    }
  }

  // The lines bwrap wrote to the child's stderr about itself.
  std::string bwrapMessage() const {
    std::string message;
    std::string_view rest = result_.stderrText;
    while (!rest.empty()) {
      const auto nl = std::min(rest.find('\n'), rest.size());
      const auto line = rest.substr(0, nl);
      if (line.starts_with("bwrap:")) message += (message.empty() ? "" : "; ") + std::string(line);
      rest.remove_prefix(std::min(nl + 1, rest.size()));
    }
    return message.empty() ? "exit status " + std::to_string(result_.exitCode) : message;
  }

  const ProcessSpec& spec_;
  std::stop_token stop_;
  ExecutionResult result_;
  ChannelReader channelReader_{result_, spec_};

  std::vector<std::string> argStore_, envStore_;
  std::vector<char*> argPtrs_, envPtrs_;
  ChildPlan plan_;

  Pipe stdin_, stdout_, stderr_, channel_, bwrapStatus_, execStatus_;
  Fd pidfd_, wake_;
  Fd serverConnection_;       // started through a fork server: where its exit is reported
  std::string stdinPending_;  // stdinText, then what the feed gives
  std::size_t stdinOffset_ = 0;
  bool stdinEnded_ = true;  // no more bytes will come (no feed, or the feed was closed)
  std::string bwrapStatusText_;
  bool bwrapStatusWanted_ = false;  // bwrap reports on a status descriptor (--json-status-fd)

  pid_t pid_ = -1;
  int waitStatus_ = 0;
  bool killed_ = false;          // ended early by this side
  bool leaderLost_ = false;      // reaped elsewhere: its pid may be reused, never signal it
  bool serverSaidExit_ = false;  // the fork server reported the exit (waitStatus_ holds it)
  Clock::time_point start_, deadline_, nextWatch_, lastKill_;
};

// --- JSON ----------------------------------------------------------------------------------------

// Length of the valid UTF-8 sequence at the start of `s`, or 0 when it is not one.
std::size_t utf8SequenceLength(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = byte(0);
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < len || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < len; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return len;
}

// Child output is arbitrary bytes (and a cap can cut a character in half); JSON needs UTF-8, so
// invalid bytes become U+FFFD instead of making dump() throw later.
std::string validUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    const std::size_t len = utf8SequenceLength(s);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      s.remove_prefix(1);
    } else {
      out.append(s.substr(0, len));
      s.remove_prefix(len);
    }
  }
  return out;
}

SandboxAvailability probeOnce() {
  if (!bubblewrap().path) {
    return {false, "bubblewrap (bwrap) is not installed (not in /usr/bin or on PATH)"};
  }
  ProcessSpec spec;
  spec.argv = {::access("/bin/true", X_OK) == 0 ? "/bin/true" : "/usr/bin/true"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.sandbox.enabled = true;
  spec.resultChannel = false;
  spec.limits.wallTimeout = std::chrono::seconds(20);
  const auto result = run(spec);
  if (result.exitedCleanly()) return {true, {}};
  std::string why = result.launchFailed ? result.launchError : result.stderrText;
  if (why.empty()) why = "exit status " + std::to_string(result.exitCode);
  while (!why.empty() && why.back() == '\n') why.pop_back();
  return {false, "bubblewrap cannot create a sandbox here: " + why};
}

}  // namespace

nlohmann::json ExecutionResult::toJson() const {
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& line : channel) lines.push_back(validUtf8(line.text));
  return {{"exit_code", exitCode},           {"term_signal", termSignal},
          {"timed_out", timedOut},           {"memory_exceeded", memoryExceeded},
          {"cancelled", cancelled},          {"launch_failed", launchFailed},
          {"launch_error", launchError},     {"wall_seconds", wallSeconds},
          {"peak_rss_bytes", peakRssBytes},  {"sandboxed", sandboxed},
          {"stdout", validUtf8(stdoutText)}, {"stderr", validUtf8(stderrText)},
          {"stdout_dropped", stdoutDropped}, {"stderr_dropped", stderrDropped},
          {"channel", std::move(lines)},     {"channel_dropped", channelDropped}};
}

StdinFeed::StdinFeed() : wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

StdinFeed::~StdinFeed() {
  if (wake_ >= 0) ::close(wake_);
}

void StdinFeed::wake() const {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_, &one, sizeof one);
}

bool StdinFeed::write(std::string_view bytes) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    pending_.append(bytes);
  }
  wake();
  return true;
}

void StdinFeed::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  wake();
}

std::string StdinFeed::take(bool& closed) {
  std::lock_guard lock(mutex_);
  closed = closed_;
  return std::exchange(pending_, {});
}

ExecutionResult run(const ProcessSpec& spec, std::stop_token stop) {
  return Runner(spec, std::move(stop)).run();
}

SandboxAvailability probeSandbox() {
  static std::once_flag once;
  static SandboxAvailability cached;
  std::call_once(once, [] { cached = probeOnce(); });
  return cached;
}

}  // namespace crucible::proc
