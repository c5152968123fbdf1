// Real child processes, no mocks: exit codes, signals, limits, output handling, the result
// channel, cancellation and the bubblewrap sandbox.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/proc/process.h"
#include "core/proc/process_group.h"
#include "core/proc/sandbox.h"

namespace crucible::proc {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

ProcessSpec shell(const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.limits.wallTimeout = 10s;
  return spec;
}

/// A fresh folder under /tmp, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/crucible-proc-XXXXXX";
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

char processState(pid_t pid) {
  const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
}

// Gone, or a zombie waiting for init to reap it (orphans are init's to reap; some container
// inits never do, which leaves a dead zombie but no running process).
bool processEnded(pid_t pid) {
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    if (::kill(pid, 0) == -1 && errno == ESRCH) return true;
    const char state = processState(pid);
    if (state == 'Z' || state == 'X') return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

pid_t readPid(const std::string& path) {
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    const std::string text = readFile(path);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(5ms);
  }
  return 0;
}

/// Processes whose command line contains `needle` (for sandboxed children, whose PIDs inside
/// their namespace mean nothing out here).
std::vector<pid_t> processesWithCommandLine(const std::string& needle) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = readFile(entry.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos && processState(std::stoi(name)) != 'Z') {
      found.push_back(std::stoi(name));
    }
  }
  return found;
}

long processGroupOf(pid_t pid) {
  const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string state;
  long ppid = 0, pgrp = 0;
  rest >> state >> ppid >> pgrp;
  return pgrp;
}

bool havePython() {
  return ::access("/usr/bin/python3", X_OK) == 0;
}

// --- exit status -------------------------------------------------------------------------------

TEST(Process, ReportsExitCode) {
  const auto ok = run(shell("exit 0"));
  EXPECT_TRUE(ok.exitedCleanly());
  EXPECT_EQ(ok.exitCode, 0);

  const auto bad = run(shell("exit 7"));
  EXPECT_EQ(bad.exitCode, 7);
  EXPECT_EQ(bad.termSignal, 0);
  EXPECT_FALSE(bad.exitedCleanly());
  EXPECT_FALSE(bad.launchFailed);
  EXPECT_FALSE(bad.sandboxed);
}

TEST(Process, ReportsTerminatingSignal) {
  const auto r = run(shell("kill -SEGV $$"));
  EXPECT_EQ(r.termSignal, SIGSEGV);
  EXPECT_EQ(r.exitCode, -1);
  EXPECT_FALSE(r.exitedCleanly());
}

TEST(Process, SeparatesStdoutAndStderr) {
  const auto r = run(shell("echo out; echo err >&2"));
  EXPECT_EQ(r.stdoutText, "out\n");
  EXPECT_EQ(r.stderrText, "err\n");
  EXPECT_GT(r.wallSeconds, 0);
  EXPECT_GT(r.peakRssBytes, 0u);
}

TEST(Process, EnvironmentIsExactlyTheSpec) {
  ProcessSpec spec;
  spec.argv = {"/usr/bin/env"};
  spec.env = {{"ALPHA", "1"}, {"PATH", "/usr/bin"}};
  const auto r = run(spec);
  EXPECT_EQ(r.stdoutText, "ALPHA=1\nPATH=/usr/bin\nCRUCIBLE_RESULT_FD=3\n");

  spec.resultChannel = false;
  EXPECT_EQ(run(spec).stdoutText, "ALPHA=1\nPATH=/usr/bin\n");
}

TEST(Process, RunsInWorkingDirectory) {
  TempDir dir;
  auto spec = shell("pwd");
  spec.workingDir = dir.path();
  EXPECT_EQ(run(spec).stdoutText, dir.path() + "\n");
}

TEST(Process, OnlyStandardDescriptorsAndChannelAreOpen) {
  // ls (a child of the shell) lists the shell's descriptors, not its own.
  const std::string script = "ls /proc/$$/fd";
  EXPECT_EQ(run(shell(script)).stdoutText, "0\n1\n2\n3\n");
  auto noChannel = shell(script);
  noChannel.resultChannel = false;
  EXPECT_EQ(run(noChannel).stdoutText, "0\n1\n2\n");
}

TEST(Process, ChildIsItsOwnSessionAndGroupLeader) {
  // Fields 5 and 6 of /proc/self/stat are pgrp and session; both must be the child's pid.
  const auto r =
      run(shell("read -r line < /proc/$$/stat; set -- ${line#*) }; "
                "[ \"$3\" = $$ ] && [ \"$4\" = $$ ] && echo leader"));
  EXPECT_EQ(r.stdoutText, "leader\n");
}

// --- launch failures -----------------------------------------------------------------------------

TEST(Process, MissingBinaryIsALaunchFailure) {
  ProcessSpec spec;
  spec.argv = {"/nonexistent/crucible-test-binary"};
  const auto r = run(spec);
  EXPECT_TRUE(r.launchFailed);
  EXPECT_NE(r.launchError.find("/nonexistent/crucible-test-binary"), std::string::npos);
  EXPECT_FALSE(r.exitedCleanly());
}

TEST(Process, RelativeProgramIsALaunchFailure) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "true"};
  const auto r = run(spec);
  EXPECT_TRUE(r.launchFailed);
  EXPECT_NE(r.launchError.find("absolute"), std::string::npos);
  EXPECT_TRUE(run(ProcessSpec{}).launchFailed);
}

TEST(Process, ExecFailureIsReportedFromTheChild) {
  // Executable but not a program: only execve itself can tell, through the status pipe.
  TempDir dir;
  const std::string junk = dir / "junk";
  std::ofstream(junk) << "\x01\x02\x03 not a program";
  ::chmod(junk.c_str(), 0755);
  ProcessSpec spec;
  spec.argv = {junk};
  const auto r = run(spec);
  EXPECT_TRUE(r.launchFailed);
  EXPECT_NE(r.launchError.find("could not execute " + junk), std::string::npos) << r.launchError;
}

TEST(Process, MissingWorkingDirectoryIsALaunchFailure) {
  auto spec = shell("true");
  spec.workingDir = "/nonexistent/crucible-dir";
  const auto r = run(spec);
  EXPECT_TRUE(r.launchFailed);
  EXPECT_NE(r.launchError.find("/nonexistent/crucible-dir"), std::string::npos);
}

// --- timeout, cancel, group kill ---------------------------------------------------------------

TEST(Process, TimeoutKillsTheWholeGroup) {
  TempDir dir;
  auto spec = shell("sleep 1000 & echo $! > " + (dir / "pid") + "; wait");
  spec.limits.wallTimeout = 300ms;
  const auto r = run(spec);
  EXPECT_TRUE(r.timedOut);
  EXPECT_EQ(r.termSignal, SIGKILL);
  EXPECT_GE(r.wallSeconds, 0.29);
  EXPECT_LT(r.wallSeconds, 2.0);
  const pid_t grandchild = readPid(dir / "pid");
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(processEnded(grandchild));
}

TEST(Process, BackgroundJobDoesNotOutliveANormalExit) {
  // The grandchild also holds stdout open: run() must not wait for it.
  TempDir dir;
  const auto r = run(shell("sleep 1000 & echo $! > " + (dir / "pid") + "; echo done"));
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.stdoutText, "done\n");
  EXPECT_LT(r.wallSeconds, 2.0);
  const pid_t grandchild = readPid(dir / "pid");
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(processEnded(grandchild));
}

TEST(Process, StopRequestFromAnotherThreadCancelsPromptly) {
  std::stop_source source;
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    source.request_stop();
  });
  const auto r = run(shell("sleep 1000"), source.get_token());
  stopper.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.termSignal, SIGKILL);
  EXPECT_LT(r.wallSeconds, 1.5);
}

TEST(Process, AlreadyStoppedTokenDoesNotStartTheChild) {
  std::stop_source source;
  source.request_stop();
  TempDir dir;
  const auto r = run(shell("touch " + (dir / "ran")), source.get_token());
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(fs::exists(dir / "ran"));
}

// --- output ------------------------------------------------------------------------------------

TEST(Process, OutputIsCappedAndTheRestCounted) {
  auto spec = shell("head -c 10000000 /dev/zero | tr '\\0' x");
  spec.limits.outputCapBytes = 1 << 20;
  const auto r = run(spec);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.stdoutText.size(), 1u << 20);
  EXPECT_EQ(r.stdoutDropped, 10'000'000u - (1u << 20));
  EXPECT_EQ(r.stdoutText.find_first_not_of('x'), std::string::npos);
}

TEST(Process, ChattyStdoutAndStderrDoNotDeadlock) {
  // Each write is far larger than a pipe buffer, alternating streams: a parent that read one
  // stream at a time would block forever.
  auto spec = shell(
      "for i in 1 2 3; do head -c 1000000 /dev/zero | tr '\\0' e >&2; "
      "head -c 1000000 /dev/zero | tr '\\0' o; done");
  spec.limits.outputCapBytes = 8 << 20;
  const auto r = run(spec);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.stdoutText, std::string(3'000'000, 'o'));
  EXPECT_EQ(r.stderrText, std::string(3'000'000, 'e'));
}

TEST(Process, StdinRoundTripOfOneMegabyte) {
  std::string input;
  for (int i = 0; input.size() < (1 << 20); ++i) input += "line " + std::to_string(i) + "\n";
  ProcessSpec spec;
  spec.argv = {"/bin/cat"};
  spec.stdinText = input;
  spec.limits.outputCapBytes = 4 << 20;
  const auto r = run(spec);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.stdoutText, input);
}

// A long-lived child (the model engine): requests go in through the feed while it runs, its
// answers come out through onStdout as they are written, and closing the feed ends it.
TEST(Process, FeedTalksToALongLivedChildLineByLine) {
  auto feed = std::make_shared<StdinFeed>();
  std::mutex mutex;
  std::condition_variable changed;
  std::string seen;
  ProcessSpec spec;
  spec.argv = {"/bin/cat"};
  spec.stdinText = "first\n";
  spec.stdinFeed = feed;
  spec.onStdout = [&](std::string_view bytes) {
    std::lock_guard lock(mutex);
    seen.append(bytes);
    changed.notify_all();
  };
  ExecutionResult r;
  std::thread runner([&] { r = run(spec); });
  const auto waitFor = [&](const std::string& text) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 10s, [&] { return seen == text; });
  };
  EXPECT_TRUE(waitFor("first\n"));  // answered while stdin is still open
  EXPECT_TRUE(feed->write("second\n"));
  EXPECT_TRUE(waitFor("first\nsecond\n"));
  feed->close();
  runner.join();
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_TRUE(r.stdoutText.empty());  // handed to onStdout instead of kept
  EXPECT_FALSE(feed->write("late\n"));
}

TEST(Process, StopEndsAChildWaitingOnAnOpenFeed) {
  auto feed = std::make_shared<StdinFeed>();
  std::promise<void> started;
  ProcessSpec spec;
  spec.argv = {"/bin/cat"};
  spec.stdinText = "up\n";
  spec.stdinFeed = feed;
  spec.onStdout = [&, once = true](std::string_view) mutable {
    if (std::exchange(once, false)) started.set_value();
  };
  std::stop_source stop;
  ExecutionResult r;
  std::thread runner([&] { r = run(spec, stop.get_token()); });
  ASSERT_EQ(started.get_future().wait_for(10s), std::future_status::ready);
  const auto start = std::chrono::steady_clock::now();
  stop.request_stop();
  runner.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.termSignal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(Process, ChildThatIgnoresStdinDoesNotHurtTheParent) {
  // The stdin pipe breaks (EPIPE, SIGPIPE blocked) instead of killing the test binary.
  auto spec = shell("exec 0<&-; sleep 0.05; echo fine");
  spec.stdinText = std::string(8 << 20, 'z');
  const auto r = run(spec);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.stdoutText, "fine\n");
}

TEST(Process, InvalidUtf8OutputStillMakesJson) {
  const auto r = run(shell("printf 'ok \\377\\376 end'; echo line >&3"));
  const auto j = r.toJson();
  std::string dumped;
  ASSERT_NO_THROW(dumped = j.dump());
  EXPECT_EQ(j["stdout"], "ok \xEF\xBF\xBD\xEF\xBF\xBD end");
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["channel"], nlohmann::json::array({"line"}));
  for (const char* key :
       {"term_signal", "timed_out", "memory_exceeded", "cancelled", "launch_failed", "launch_error",
        "wall_seconds", "peak_rss_bytes", "sandboxed", "stderr", "stdout_dropped", "stderr_dropped",
        "channel_dropped"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
}

// --- result channel ------------------------------------------------------------------------------

TEST(Process, ChannelLinesAreTimestampedAndApartFromStdout) {
  const auto before = std::chrono::steady_clock::now();
  const auto r = run(shell(
      "echo one >&3; sleep 0.1; echo stdout-line; echo two >&3; sleep 0.1; printf partial >&3"));
  ASSERT_EQ(r.channel.size(), 3u);
  EXPECT_EQ(r.channel[0].text, "one");
  EXPECT_EQ(r.channel[1].text, "two");
  EXPECT_EQ(r.channel[2].text, "partial");
  EXPECT_EQ(r.stdoutText, "stdout-line\n");
  EXPECT_GE(r.channel[0].received, before);
  EXPECT_GE(r.channel[1].received - r.channel[0].received, 80ms);
  EXPECT_GE(r.channel[2].received - r.channel[1].received, 80ms);
}

TEST(Process, NoChannelMeansFdThreeIsClosed) {
  auto spec = shell("if echo x >&3; then echo open; else echo closed; fi 2>/dev/null");
  spec.resultChannel = false;
  const auto r = run(spec);
  EXPECT_EQ(r.stdoutText, "closed\n");
  EXPECT_TRUE(r.channel.empty());
}

// --- resource limits -----------------------------------------------------------------------------

TEST(Process, MemoryWatchdogKillsAHog) {
  if (!havePython()) GTEST_SKIP() << "no /usr/bin/python3";
  ProcessSpec spec;
  spec.argv = {"/usr/bin/python3", "-c", "import time; x = bytearray(3 << 30); time.sleep(60)"};
  spec.limits.memoryBytes = 200u << 20;
  spec.limits.wallTimeout = 15s;
  const auto r = run(spec);
  EXPECT_TRUE(r.memoryExceeded);
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.termSignal, SIGKILL);
  EXPECT_GT(r.peakRssBytes, 200u << 20);
  EXPECT_LT(r.wallSeconds, 5.0);
}

TEST(Process, MemoryWatchdogCountsTheWholeGroup) {
  // Three 100 MB processes: none is over 250 MB alone, the group is.
  if (!havePython()) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string hog =
      "/usr/bin/python3 -c 'import time; x = bytearray(100 << 20); time.sleep(60)'";
  auto spec = shell(hog + " & " + hog + " & " + hog + " & wait");
  spec.limits.memoryBytes = 250u << 20;
  const auto r = run(spec);
  EXPECT_TRUE(r.memoryExceeded);
  EXPECT_GT(r.peakRssBytes, 250u << 20);
  EXPECT_LT(r.wallSeconds, 5.0);
}

TEST(Process, FileSizeLimitEndsTheChild) {
  TempDir dir;
  auto spec = shell("exec head -c 2000000 /dev/zero > " + (dir / "big"));
  spec.limits.fileSizeBytes = 1 << 20;
  const auto r = run(spec);
  EXPECT_EQ(r.termSignal, SIGXFSZ);
  EXPECT_EQ(fs::file_size(dir / "big"), 1u << 20);
}

TEST(Process, CpuLimitEndsABusyLoop) {
  auto spec = shell("while :; do :; done");
  spec.limits.cpuSeconds = 1;
  const auto r = run(spec);
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.termSignal, SIGXCPU);
  EXPECT_LT(r.wallSeconds, 5.0);
}

TEST(Process, AddressSpaceLimitFailsLargeAllocations) {
  if (!havePython()) GTEST_SKIP() << "no /usr/bin/python3";
  ProcessSpec spec;
  spec.argv = {"/usr/bin/python3", "-c",
               "try:\n  x = bytearray(1 << 30)\nexcept MemoryError:\n  print('refused')"};
  spec.limits.addressSpaceBytes = 512u << 20;
  const auto r = run(spec);
  EXPECT_EQ(r.stdoutText, "refused\n");
  EXPECT_FALSE(r.memoryExceeded);
}

TEST(Process, CoreDumpsAreDisabled) {
  EXPECT_EQ(run(shell("ulimit -c")).stdoutText, "0\n");
}

// --- concurrency -------------------------------------------------------------------------------

TEST(Process, ConcurrentRunsFromSeveralThreads) {
  constexpr int kThreads = 8;
  std::vector<ExecutionResult> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&results, i] {
      auto spec = shell("echo " + std::to_string(i) + "; echo c" + std::to_string(i) + " >&3");
      spec.stdinText = std::string(100000, 'q');
      results[i] = run(spec);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(results[i].stdoutText, std::to_string(i) + "\n");
    ASSERT_EQ(results[i].channel.size(), 1u);
    EXPECT_EQ(results[i].channel[0].text, "c" + std::to_string(i));
  }
}

// --- sandbox -----------------------------------------------------------------------------------

TEST(SandboxCommand, KeepsTheProcessGroupAndOrdersBinds) {
  TempDir dir;
  fs::create_directories(dir / "ro/rw");
  ProcessSpec spec;
  spec.argv = {"/bin/true", "--flag"};
  spec.workingDir = dir / "ro/rw";
  spec.sandbox.enabled = true;
  spec.sandbox.writablePaths = {dir / "ro/rw"};
  spec.sandbox.readOnlyPaths = {dir / "ro", "/nonexistent/optional"};
  const auto cmd = sandbox::bubblewrapCommand("/usr/bin/bwrap", spec, 4);
  ASSERT_TRUE(cmd.error.empty()) << cmd.error;
  const auto& a = cmd.argv;
  auto at = [&](const std::string& word) {
    return std::find(a.begin(), a.end(), word) - a.begin();
  };
  EXPECT_EQ(a.front(), "/usr/bin/bwrap");
  EXPECT_LT(at("--die-with-parent"), a.size());
  EXPECT_LT(at("--unshare-all"), a.size());
  EXPECT_EQ(at("--new-session"), static_cast<long>(a.size()));
  EXPECT_EQ(at("--share-net"), static_cast<long>(a.size()));
  EXPECT_EQ(a[at("--cap-drop") + 1], "ALL");
  EXPECT_EQ(a[at("--json-status-fd") + 1], "4");
  EXPECT_EQ(at("/nonexistent/optional"), static_cast<long>(a.size()));
  EXPECT_LT(at("--tmpfs"), at(dir / "ro"));
  EXPECT_LT(at(dir / "ro"), at(dir / "ro/rw"));
  EXPECT_EQ(a[at(dir / "ro") - 1], "--ro-bind");
  EXPECT_EQ(a[at(dir / "ro/rw") - 1], "--bind");
  EXPECT_EQ(a[at("--chdir") + 1], dir / "ro/rw");
  EXPECT_EQ(std::vector<std::string>(a.end() - 3, a.end()),
            (std::vector<std::string>{"--", "/bin/true", "--flag"}));

  spec.sandbox.writablePaths = {"/nonexistent/scratch"};
  EXPECT_FALSE(sandbox::bubblewrapCommand("/usr/bin/bwrap", spec, -1).error.empty());
}

TEST(SandboxCommand, AForkServersSandboxKeepsThePidNamespaceAndNothingElse) {
  ProcessSpec spec;
  spec.argv = {"/bin/true"};
  spec.sandbox.enabled = true;
  spec.sandbox.sharePids = true;
  const auto cmd = sandbox::bubblewrapCommand("/usr/bin/bwrap", spec, -1);
  ASSERT_TRUE(cmd.error.empty()) << cmd.error;
  const auto& a = cmd.argv;
  auto has = [&](const std::string& word) {
    return std::find(a.begin(), a.end(), word) != a.end();
  };
  // The pids the server reports are the caller's, so /proc is the host's, bound.
  EXPECT_FALSE(has("--unshare-all"));
  EXPECT_FALSE(has("--unshare-pid"));
  EXPECT_FALSE(has("--proc"));
  for (const char* ns : {"--unshare-user-try", "--unshare-ipc", "--unshare-net", "--unshare-uts"}) {
    EXPECT_TRUE(has(ns)) << ns;
  }
  const auto bind = std::find(a.begin(), a.end(), "/proc");
  ASSERT_NE(bind, a.end());
  EXPECT_EQ(*(bind - 1), "--bind");
}

class Sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto availability = probeSandbox();
    if (!availability.available) GTEST_SKIP() << availability.reason;
  }

  ProcessSpec sandboxed(const std::string& script) {
    auto spec = shell(script);
    spec.sandbox.enabled = true;
    spec.sandbox.readOnlyPaths = {dir_ / "ro"};
    spec.sandbox.writablePaths = {dir_ / "ro/scratch"};
    spec.workingDir = dir_ / "ro/scratch";
    fs::create_directories(dir_ / "ro/scratch");
    return spec;
  }

  TempDir dir_;
};

TEST_F(Sandbox, WritesOnlyWhereAllowed) {
  const auto r = run(sandboxed("touch " + (dir_ / "ro/scratch/ok") + " && echo wrote; " +  //
                               "touch " + (dir_ / "ro/nope") + " 2>/dev/null || echo ro-refused; " +
                               "touch /usr/nope 2>/dev/null || echo usr-refused; pwd"));
  EXPECT_TRUE(r.sandboxed);
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "wrote\nro-refused\nusr-refused\n" + (dir_ / "ro/scratch") + "\n");
  EXPECT_TRUE(fs::exists(dir_ / "ro/scratch/ok"));
  EXPECT_FALSE(fs::exists(dir_ / "ro/nope"));
}

TEST_F(Sandbox, HostTmpIsNotVisible) {
  TempDir outside;
  std::ofstream(outside / "secret") << "x";
  const auto r = run(sandboxed("test -e " + (outside / "secret") + " && echo seen || echo hidden"));
  EXPECT_EQ(r.stdoutText, "hidden\n") << r.stderrText;
}

TEST_F(Sandbox, HasNoNetwork) {
  const auto r = run(sandboxed("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"));
  EXPECT_EQ(r.stdoutText, "lo\n") << r.stderrText;
}

TEST_F(Sandbox, HasNoCapabilities) {
  const auto r = run(sandboxed("grep CapEff /proc/self/status"));
  EXPECT_EQ(r.stdoutText, "CapEff:\t0000000000000000\n");
}

TEST_F(Sandbox, ChannelAndExitStatusPassThrough) {
  const auto r = run(sandboxed("echo hello >&3; echo out; exit 5"));
  EXPECT_EQ(r.exitCode, 5);
  EXPECT_FALSE(r.launchFailed);
  EXPECT_EQ(r.stdoutText, "out\n");
  ASSERT_EQ(r.channel.size(), 1u);
  EXPECT_EQ(r.channel[0].text, "hello");

  const auto crashed = run(sandboxed("kill -SEGV $$"));
  EXPECT_EQ(crashed.termSignal, SIGSEGV);
  EXPECT_EQ(crashed.exitCode, -1);
}

TEST_F(Sandbox, GroupKillOnTimeoutEndsSandboxedProcesses) {
  // A unique sleep length finds the sleeper from out here; while it runs, its process group must
  // be the one whose leader is bwrap (the child run() started), or a group kill would miss it.
  const std::string marker = "1000." + std::to_string(::getpid()) + "7";
  auto spec = sandboxed("sleep " + marker + " & wait");
  spec.limits.wallTimeout = 1500ms;
  std::atomic<long> sleeperGroup{0};
  std::string groupLeader;
  std::thread watcher([&] {
    const auto until = std::chrono::steady_clock::now() + 1200ms;
    while (std::chrono::steady_clock::now() < until) {
      const auto found = processesWithCommandLine("sleep " + marker);
      if (!found.empty()) {
        sleeperGroup = processGroupOf(found.front());
        groupLeader = readFile("/proc/" + std::to_string(sleeperGroup.load()) + "/comm");
        return;
      }
      std::this_thread::sleep_for(10ms);
    }
  });
  const auto r = run(spec);
  watcher.join();
  EXPECT_TRUE(r.timedOut);
  EXPECT_TRUE(r.sandboxed);
  EXPECT_FALSE(r.launchFailed);
  ASSERT_NE(sleeperGroup.load(), 0) << "the sandboxed sleeper was never seen";
  EXPECT_NE(sleeperGroup.load(), static_cast<long>(::getpgrp()));
  EXPECT_EQ(groupLeader, "bwrap\n");
  EXPECT_TRUE(processesWithCommandLine("sleep " + marker).empty());
  for (pid_t member : scanProcessGroup(static_cast<pid_t>(sleeperGroup.load())).members) {
    EXPECT_TRUE(processEnded(member)) << member;
  }
}

TEST_F(Sandbox, MemoryWatchdogSeesInsideTheSandbox) {
  if (!havePython()) GTEST_SKIP() << "no /usr/bin/python3";
  auto spec =
      sandboxed("/usr/bin/python3 -c 'import time; x = bytearray(2 << 30); time.sleep(60)'");
  spec.limits.memoryBytes = 200u << 20;
  const auto r = run(spec);
  EXPECT_TRUE(r.memoryExceeded);
  EXPECT_LT(r.wallSeconds, 5.0);
}

TEST_F(Sandbox, ProgramOutsideTheSandboxIsALaunchFailure) {
  // Exists on the host, but its folder is not bound: bwrap cannot exec it.
  TempDir elsewhere;
  const std::string script = elsewhere / "prog.sh";
  std::ofstream(script) << "#!/bin/sh\necho ran\n";
  ::chmod(script.c_str(), 0755);
  auto spec = sandboxed("");
  spec.argv = {script};
  const auto r = run(spec);
  EXPECT_TRUE(r.launchFailed);
  EXPECT_NE(r.launchError.find("bwrap"), std::string::npos) << r.launchError;
  EXPECT_EQ(r.stdoutText, "");
}

TEST_F(Sandbox, MissingWritablePathIsALaunchFailure) {
  auto spec = sandboxed("true");
  spec.sandbox.writablePaths.push_back("/nonexistent/crucible-scratch");
  const auto r = run(spec);
  EXPECT_TRUE(r.launchFailed);
  EXPECT_NE(r.launchError.find("/nonexistent/crucible-scratch"), std::string::npos);
}

}  // namespace
}  // namespace crucible::proc
