#pragma once
// `crucible tasks synth`: sample programs, solve their shapes, write them as KernelBench-format
// references, run each one and keep those whose outputs are finite and not degenerate, until
// the requested number is reached. Candidate i of a run is fully determined by (seed, i), and
// candidates are accepted in order, so a seed always gives the same files, byte for byte.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <vector>

#include "core/task_synth/shape_model.h"
#include "core/task_synth/task_check.h"

namespace crucible::task_synth {

struct SynthOptions {
  int computeNodes = 3;  // difficulty
  int count = 10;
  std::uint64_t seed = 0;
  std::filesystem::path outDir;
  ShapeBounds bounds;
  bool runCheck = true;
  CheckOptions check;
  std::uint64_t maxCandidates = 0;  // 0: 50 per task plus 100; beyond it the run fails
  bool overwrite = false;           // allow a non-empty output folder
};

struct SynthTask {
  int id = 0;
  std::string file, name, description;
  std::vector<std::string> ops;       // distinct, in order of first use (index.json)
  std::vector<std::string> sequence;  // every compute node's operator (coverage)
  int computeNodes = 0;
  std::uint64_t candidate = 0;
  std::int64_t flops = 0, bytes = 0;
  double ms = 0;  // eager forward in the run check (0 without it)
};

struct SynthReport {
  std::vector<SynthTask> tasks;
  std::map<std::string, int> coverage;  // every catalogue operator -> uses in accepted tasks
  std::vector<std::string> unused;      // operators no accepted task uses
  std::map<std::string, int> rejected;  // infeasible, limit, error, nonfinite, degenerate
  std::uint64_t candidates = 0;
  double seconds = 0, solveSeconds = 0, checkSeconds = 0;
  bool cancelled = false;
  nlohmann::json toJson() const;
};

/// The index.json entry of a task (the corpus's keys, level "synth", and where it came from).
/// Keys in the corpus's order: file, name, level, ops, description, then the synthesis's own.
nlohmann::ordered_json indexEntry(const SynthTask& task, std::uint64_t seed);

struct SynthProgress {
  int accepted = 0, target = 0;
  std::uint64_t candidates = 0;
  int rejected = 0;
};
using SynthProgressFn = std::function<void(const SynthProgress&)>;

/// Runs the synthesis. Throws std::invalid_argument for bad options, std::runtime_error when
/// the output folder cannot be written or too many candidates were rejected, and
/// CheckInfrastructureError when the worker fails. On `stop`, writes what was accepted so far
/// (index included) and returns with `cancelled` set.
SynthReport synthesize(const SynthOptions& options, const SynthProgressFn& progress = {},
                       std::stop_token stop = {});

}  // namespace crucible::task_synth
