#pragma once
// `crucible ir` and the workbench's IR view: runs the reference (for its inputs) and then the
// `ir` worker stage on the candidate, in the candidate's sandbox, and reads back what each
// kernel the candidate launches compiles to (core/inspect/kernel_ir). The candidate's code runs
// only in that stage, never in this process.

#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <vector>

#include "core/inspect/kernel_ir.h"

namespace crucible::inspect {

struct IrRequest {
  std::string candidatePath;  // a candidate file, or a model response with one
  std::string referencePath;
  std::string backend = "auto";  // auto, opencl, cuda (no GPU needed: compiled for a default
                                 // target), interpret
  int seed = 42;
  double timeoutSeconds = 300;  // for the ir stage; the reference gets at least as long
  std::string openclDevice;     // CRUCIBLE_OPENCL_DEVICE for the opencl backend, if any
};

/// The backend `crucible ir` runs on: as `crucible verify` resolves it, except that cuda needs
/// no GPU. Throws BadInput for an unknown name.
std::string resolveIrBackend(const std::string& requested);

/// Runs the stages and builds the report. Blocking; `stop` cancels the running stage (then
/// std::runtime_error "cancelled"). Throws BadInput for an unreadable candidate or a reference
/// that does not run (naming the file and line); a candidate that does not run is the report's
/// `error`, with its line.
KernelIrReport inspectKernels(const IrRequest& request, std::stop_token stop = {});

/// The report from the ir stage's facts (docs/WORKER_PROTOCOL.md, "ir"): `stageFiles` are the
/// candidate's paths as the stage's compiler saw them (the line maps keep locations there
/// only), `candidateFile` the user's path for errors, `lineOffset` added to every Python line
/// (a candidate taken from a model response starts below its first line). Malformed facts give
/// errors in the report, never an exception.
KernelIrReport reportFromFacts(const nlohmann::json& facts,
                               const std::vector<std::string>& stageFiles,
                               const std::string& candidateFile, int lineOffset = 0);

}  // namespace crucible::inspect
