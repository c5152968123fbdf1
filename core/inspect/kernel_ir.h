#pragma once
// What actually runs for a candidate, kernel by kernel (`crucible ir`, the workbench's IR view):
// for each distinct kernel specialisation one forward call launches, the text of each level its
// backend compiles it to, and for each line of that text the candidate's Python line it came
// from. A value type with a JSON round-trip; core/inspect/ir_run produces it.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace crucible::inspect {

/// Why something could not be produced: the stage ("load", "construct", "forward", "compile",
/// "ir"), the message, and where known the file and line.
struct IrError {
  std::string stage;
  std::string message;
  std::string file;
  std::optional<int> line;
};

/// One level of one kernel: "opencl_c", "ttir", "ttgir", "llir" or "ptx".
struct IrLevel {
  std::string name;
  std::string text;
  /// One entry per line of `text` (split at '\n', no entry after a final newline): the
  /// candidate's Python line, or none. Empty when there is no map (see `error`).
  std::vector<std::optional<int>> lineMap;
  std::optional<IrError> error;  // the level (or its line map) could not be produced
};

struct KernelIr {
  std::string name;
  std::optional<int> defLine;  // the line of the kernel's `def` in the candidate file
  std::string specialization;  // argument types and constexpr values, as text
  std::vector<IrLevel> levels;
  std::optional<IrError> error;  // the kernel could not be compiled
};

struct KernelIrReport {
  std::string backend;    // opencl, cuda or interpret
  bool compiled = false;  // false on interpret: nothing is compiled there
  std::string target;     // what was compiled for ("cuda sm_90 ...", "OpenCL C ...")
  std::string note;       // a plain sentence for the user, or empty
  std::string candidateFile;
  std::vector<KernelIr> kernels;
  std::optional<IrError> error;  // the candidate did not run (kernels may still be listed)
};

/// The names of the levels, in the order a backend produces them.
const std::vector<std::string>& irLevelNames();

nlohmann::json toJson(const IrError& e);
nlohmann::json toJson(const IrLevel& l);
nlohmann::json toJson(const KernelIr& k);
nlohmann::json toJson(const KernelIrReport& r);

/// Throws std::invalid_argument naming the key when `j` is not a report's JSON.
KernelIrReport kernelIrReportFromJson(const nlohmann::json& j);

/// Lines of `text` as IrLevel::lineMap counts them.
std::vector<std::string> splitIrLines(const std::string& text);

}  // namespace crucible::inspect
