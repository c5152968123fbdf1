#pragma once
// Gathering a KernelProfile (`crucible profile`): the reference stage writes the inputs and
// measures the device's peaks, then the worker's `profile` stage runs the candidate twice, each
// time sandboxed like the candidate stage: timed on the backend, and counted on Triton's
// interpreter. Cancellable through the stop token (each stage's process group is killed) and
// bounded by a timeout per stage; the caller runs it off any UI thread.

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "core/inspect/kernel_profile.h"

namespace crucible {

struct ProfileRequest {
  std::string referencePath;
  std::string candidatePath;     // a Python file (its lines are the profile's lines)
  std::string backend = "auto";  // auto | interpret | cuda | opencl
  int calls = 10;                // timed forward calls
  int warmup = 2;                // untimed calls before them (compiles, autotuning)
  int seed = 42;
  int threads = 1;              // PyTorch's (and PoCL's) CPU threads, as in verification
  double timeoutSeconds = 300;  // each of the candidate's two stage runs
  double countCapSeconds = 60;  // per launch, on the interpreter
  std::string openclDevice;     // opencl: substring of the device's name
  std::optional<std::uint64_t> memoryLimitBytes;  // default: min(8 GiB, 60% of RAM)
};

struct ProfileProgress {
  std::string stage;    // reference | time | count
  std::string message;  // for humans
};

/// Runs the stages and assembles the profile. Throws BadInput for usage problems and for a
/// reference that does not run (naming its file and line), std::runtime_error when cancelled
/// or when the harness fails; whatever the candidate does ends in the profile's `error` (its
/// file and line) or, for the count alone, in its `countNote`.
KernelProfile profileCandidate(const ProfileRequest& request,
                               const std::function<void(const ProfileProgress&)>& progress = {},
                               std::stop_token stop = {});

}  // namespace crucible
