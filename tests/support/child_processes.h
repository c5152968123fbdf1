#pragma once
// The running children of this process with a given program name, read from /proc: what a test
// kills to play a crash or the kernel's out-of-memory killer (SIGKILL) on the model engine.

#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace crucible::testing {

inline std::vector<pid_t> childrenNamed(const std::string& name) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so read from its closing parenthesis.
    const auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    pid_t parent = 0;
    rest >> state >> parent;
    if (parent == ::getpid() && state != 'Z' && line.substr(open + 1, close - open - 1) == name)
      found.push_back(static_cast<pid_t>(std::stol(pid)));
  }
  return found;
}

}  // namespace crucible::testing
