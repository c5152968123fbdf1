#pragma once
// Runs a program (the CLI) as a user at a terminal would, and presses Ctrl-C (SIGINT) as soon as
// its stderr shows a marker: what a test of "Ctrl-C keeps what was stored" needs.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace crucible::testing {

struct InterruptedRun {
  bool sawMarker = false;  // false: the program ended first and was not interrupted
  bool exited = false;     // ended by exit (not by a signal)
  int exitCode = -1;
  std::string out, err;
  std::chrono::steady_clock::duration afterInterrupt{};  // from SIGINT to its end
};

inline InterruptedRun interruptWhenSeen(std::vector<std::string> argv, const std::string& marker) {
  InterruptedRun run;
  int err[2], out[2];
  if (::pipe2(err, O_CLOEXEC) != 0) return run;
  if (::pipe2(out, O_CLOEXEC) != 0) return run;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(err[1]);
  ::close(out[1]);
  for (char c = 0; ::read(err[0], &c, 1) == 1;) {
    run.err += c;
    if (run.err.find(marker) != std::string::npos) {
      run.sawMarker = true;
      break;
    }
  }
  const auto interrupted = std::chrono::steady_clock::now();
  if (run.sawMarker) ::kill(pid, SIGINT);
  for (char c = 0; ::read(err[0], &c, 1) == 1;) run.err += c;
  for (char c = 0; ::read(out[0], &c, 1) == 1;) run.out += c;
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.afterInterrupt = std::chrono::steady_clock::now() - interrupted;
  ::close(err[0]);
  ::close(out[0]);
  run.exited = WIFEXITED(status);
  if (run.exited) run.exitCode = WEXITSTATUS(status);
  return run;
}

}  // namespace crucible::testing
