#pragma once
// Verifying one candidate end to end: static analysis, the reference run, the candidate run in
// its sandbox (each a worker process), then comparisons and the judge in this process.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "core/verify/bad_input.h"
#include "core/verify/baseline_keeper.h"
#include "core/verify/compare.h"
#include "core/verify/evaluation.h"
#include "core/verify/reference_cache.h"

namespace crucible {

struct VerifyRequest {
  std::string referencePath;
  std::string candidatePath;  // a .py file or a raw model response
  // The candidate's text, when it is not in a file (generation): verified instead of reading
  // candidatePath, which then only names it in messages.
  std::optional<std::string> candidateText;
  std::string backend = "auto";  // auto | interpret | cuda | opencl
  int trials = 5;
  int seed = 42;
  std::string rewardPreset = "tritonrl";
  double timeoutSeconds = 300;  // the candidate's stage, wall clock
  bool compileBaseline = true;  // also time torch.compile(reference)
  std::optional<int> timingReps;
  // PyTorch's CPU threads (and PoCL's on opencl) in the reference's and the candidate's stages
  // alike; 0 leaves PyTorch's default (every core). One by default, so that a busy desktop
  // slows both sides alike instead of starving a thread pool.
  int threads = 1;
  ToleranceTable tolerances;
  double speedupCeiling = 10;
  std::optional<std::uint64_t> memoryLimitBytes;  // default: min(8 GiB, 60% of RAM)
  bool keepJobDir = false;                        // for debugging the harness
  std::string openclDevice;  // opencl: substring of the device name to run on; "" = the first
  // Shared by the candidates of one task (generation, benchmarks): the reference stage runs once
  // and later candidates reuse its inputs, expected outputs and baseline times. Null: run it.
  std::shared_ptr<ReferenceCache> referenceCache;
  // With referenceCache: the reference's timer stays alive for later candidates on the same
  // reused run, torch.compile's imports and compile paid once (baseline_keeper.h). Null: each
  // verification starts its own.
  std::shared_ptr<BaselineKeeper> baselineKeeper;
};

struct VerifyProgress {
  std::string stage;    // static | reference | candidate | judge
  std::string message;  // for humans
};

struct VerifyOutcome {
  Evaluation evaluation;
  std::string referenceSource;
  std::string candidateSource;  // the file as given (a response stays a response)
  std::string candidateCode;    // the code that ran
  bool candidateFromResponse = false;
  std::string jobDir;  // when kept
};

/// Resolves `auto` (cuda when an NVIDIA GPU is visible, else opencl when an OpenCL driver and
/// libcrucible_tcl are found, else interpret); throws BadInput for a backend that is unknown or
/// not available here.
std::string resolveBackend(const std::string& requested);

/// Checks a reference without running it: Python's own parser (the static stage, a worker
/// process) and the definitions KernelBench needs. Throws BadInput naming the file and line.
void checkReference(const std::string& referencePath, std::stop_token stop = {});

/// Runs the whole pipeline. Throws BadInput for usage or reference problems; everything the
/// candidate does ends in the returned evaluation.
VerifyOutcome verify(const VerifyRequest& request,
                     const std::function<void(const VerifyProgress&)>& progress = {},
                     std::stop_token stop = {});

}  // namespace crucible
