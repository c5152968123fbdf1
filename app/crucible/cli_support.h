#pragma once
// What several CLI commands share: the options that say how a candidate is verified (verify and
// generate take the same ones), --help and usage errors, and the task a reference is stored as.
// Ctrl-C is interrupt.h.

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/store/store.h"
#include "core/verify/verifier.h"

namespace crucible::cli {

/// The help lines for the options parseVerifyOption() takes.
extern const char* const kVerifyOptionsHelp;

/// Reads args[i] (and its value, advancing i) into `request` when it is one of the verification
/// options; false when it is not one of them. Throws BadInput for a bad value.
bool parseVerifyOption(const std::vector<std::string>& args, std::size_t& i,
                       VerifyRequest& request);

/// The value after args[i] (advancing i); BadInput when there is none.
const std::string& optionValue(const std::vector<std::string>& args, std::size_t& i);
/// The number after args[i] (advancing i); BadInput unless it is a number >= low.
double numberOption(const std::vector<std::string>& args, std::size_t& i, double low);
/// The backend named after args[i] (advancing i): auto, interpret, cuda or opencl, unresolved;
/// BadInput for any other name.
const std::string& backendOption(const std::vector<std::string>& args, std::size_t& i);

/// --help and bad usage, the same for every command: nullopt when `args` parsed into `options`
/// (through `parse`, which throws BadInput), else the exit code (0 after --help, 2 after an
/// error, with the usage printed).
template <typename Options, typename Parse>
std::optional<int> parseCommandLine(const std::vector<std::string>& args, const char* command,
                                    const std::string& usage, Parse parse, Options& options,
                                    std::ostream& out, std::ostream& err) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      out << usage;
      return 0;
    }
  }
  try {
    options = parse(args);
  } catch (const BadInput& e) {
    err << "crucible " << command << ": " << e.what() << "\n\n" << usage;
    return 2;
  }
  return std::nullopt;
}

/// The task a reference file is stored as: named after the file, or after its folder when the
/// file is just "reference.py"; its absolute path; its source.
store::TaskInput taskFor(const std::string& referencePath, const std::string& source);

}  // namespace crucible::cli
