#pragma once
// Runs the real crucible binary (CRUCIBLE_TEST_CLI) with a clean environment, for CLI tests.

#include <map>
#include <string>
#include <vector>

#include "tests/support/cli_run.h"

namespace crucible::test {

using CliRun = testing::CliResult;

/// `env` adds to (or overrides) the inherited PATH, HOME, LANG and TMPDIR.
inline CliRun runCli(const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env = {}) {
  return testing::runProgram(CRUCIBLE_TEST_CLI, args, env);
}

}  // namespace crucible::test
