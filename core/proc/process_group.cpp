#include "core/proc/process_group.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace crucible::proc {

namespace {

struct StatFields {
  long pgrp = 0;
  std::uint64_t rssPages = 0;
};

// /proc/PID/stat is "pid (comm) state ppid pgrp ... rss ...". comm may contain spaces and
// parentheses, so fields are counted from the last ')'. After it, field 3 (state) is token 0,
// pgrp (field 5) is token 2 and rss (field 24) is token 21.
bool parseStat(std::string_view text, StatFields& out) {
  const auto close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  text.remove_prefix(close + 1);
  int token = -1;
  bool gotPgrp = false;
  while (!text.empty()) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (text.empty()) break;
    const auto end = std::min(text.find(' '), text.size());
    const auto word = text.substr(0, end);
    ++token;
    if (token == 2) {
      gotPgrp = std::from_chars(word.data(), word.data() + word.size(), out.pgrp).ec == std::errc{};
    } else if (token == 21) {
      std::from_chars(word.data(), word.data() + word.size(), out.rssPages);
      return gotPgrp;
    }
    text.remove_prefix(end);
  }
  return false;
}

bool readStat(const char* pidName, StatFields& out) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/stat", pidName);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t got = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (got <= 0) return false;
  return parseStat(std::string_view(buf, static_cast<std::size_t>(got)), out);
}

bool isPidName(const char* name) {
  if (*name == '\0') return false;
  for (; *name != '\0'; ++name) {
    if (*name < '0' || *name > '9') return false;
  }
  return true;
}

}  // namespace

GroupUsage scanProcessGroup(pid_t pgid) {
  GroupUsage usage;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return usage;
  static const auto pageSize = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  while (const dirent* entry = ::readdir(dir)) {
    if (!isPidName(entry->d_name)) continue;
    StatFields fields;
    if (!readStat(entry->d_name, fields) || fields.pgrp != pgid) continue;
    usage.members.push_back(static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10)));
    usage.rssBytes += fields.rssPages * pageSize;
  }
  ::closedir(dir);
  return usage;
}

}  // namespace crucible::proc
