#pragma once
// A verified kernel as a bundle a user can hand on: the kernel, the reference it was verified
// against, and the report as JSON and Markdown. A candidate that is not verified is exported only
// when asked for deliberately, and the bundle says so in every file.

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/verify/evaluation.h"

namespace crucible {

struct BundleInput {
  std::string taskName;                  // "row_softmax"; names the kernel file
  std::string referenceSource;           // the reference as verified
  std::string kernelCode;                // the candidate's code
  std::string origin;                    // "file", "edit", a model's name...
  std::optional<Evaluation> evaluation;  // its latest evaluation; nullopt when never verified
};

/// Refused: the candidate is not verified and the caller did not allow it, or the folder cannot
/// be written. The message says which.
class ExportRefused : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// True when the bundle can be written without the deliberate choice: verified.
bool isExportableWithoutConfirmation(const BundleInput& input);

/// Writes <dir>/<task>_kernel.py, <dir>/<task>_reference.py, <dir>/report.json and
/// <dir>/report.md (each written to a temporary name, then renamed). Creates `dir`. Throws
/// ExportRefused when the candidate is not verified and `allowUnverified` is false. Returns the
/// paths written.
std::vector<std::string> writeBundle(const std::string& dir, const BundleInput& input,
                                     bool allowUnverified);

/// The report.json object: {"unverified", "task", "origin", "evaluation", "files"}.
nlohmann::json bundleReport(const BundleInput& input);

}  // namespace crucible
