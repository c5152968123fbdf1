#pragma once
// Runs the real crucible binary (CRUCIBLE_TEST_CLI) with a clean environment, for CLI tests.

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/proc/process.h"

namespace crucible::test {

struct CliRun {
  int exitCode;
  std::string out, err;
};

inline CliRun runCli(const std::vector<std::string>& args) {
  proc::ProcessSpec spec;
  spec.argv = {CRUCIBLE_TEST_CLI};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  for (const char* name : {"PATH", "HOME", "LANG", "TMPDIR"}) {
    if (const char* v = std::getenv(name)) spec.env[name] = v;
  }
  spec.limits.wallTimeout = std::chrono::minutes(10);
  spec.limits.outputCapBytes = 16 << 20;
  spec.resultChannel = false;
  auto r = proc::run(spec);
  return {r.exitCode, r.stdoutText, r.stderrText};
}

}  // namespace crucible::test
