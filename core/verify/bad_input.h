#pragma once
// The error for what the user must fix: bad usage or a bad reference. The CLI exits with 2 and
// prints `what()`, which names the file and, where known, the line (file:line: ...).

#include <stdexcept>

namespace crucible {

class BadInput : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace crucible
