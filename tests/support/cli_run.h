#pragma once
// Runs the CLI to its end as a test's child: a small environment (the user's PATH, HOME, LANG,
// TMPDIR and what the test adds), generous limits, stdout and stderr kept.

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/proc/process.h"

namespace crucible::testing {

struct CliResult {
  int exitCode;
  std::string out, err;
};

/// `env` adds to (or overrides) the inherited PATH, HOME, LANG and TMPDIR.
inline CliResult runProgram(const std::string& program, const std::vector<std::string>& args,
                            const std::map<std::string, std::string>& env = {}) {
  proc::ProcessSpec spec;
  spec.argv = {program};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  for (const char* name : {"PATH", "HOME", "LANG", "TMPDIR"}) {
    if (const char* v = std::getenv(name)) spec.env[name] = v;
  }
  for (const auto& [name, value] : env) spec.env[name] = value;
  spec.limits.wallTimeout = std::chrono::minutes(10);
  spec.limits.outputCapBytes = 16 << 20;
  spec.resultChannel = false;
  auto r = proc::run(spec);
  return {r.exitCode, std::move(r.stdoutText), std::move(r.stderrText)};
}

}  // namespace crucible::testing
