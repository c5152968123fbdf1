#include "core/task_synth/synthesizer.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "core/task_synth/rng.h"
#include "core/task_synth/task_writer.h"
#include "core/util/atomic_file.h"
#include "core/util/locations.h"

namespace crucible::task_synth {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A private scratch folder for the candidates and their outputs, removed at the end.
class Scratch {
 public:
  Scratch() {
    std::string pattern = temporaryRoot() + "/crucible-synth-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a scratch folder in " + pattern);
    }
    root_ = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

/// A candidate that has shapes and a source, waiting for its run check.
struct Candidate {
  std::uint64_t index = 0;
  TaskText text;
  std::vector<std::string> sequence;
  std::int64_t flops = 0, bytes = 0;
  fs::path staged;
};

void prepareOutDir(const SynthOptions& o) {
  if (o.outDir.empty()) throw std::invalid_argument("--out is required");
  std::error_code ec;
  if (fs::exists(o.outDir, ec) && !fs::is_directory(o.outDir, ec)) {
    throw std::invalid_argument(o.outDir.string() + " exists and is not a folder");
  }
  if (fs::exists(o.outDir, ec) && !fs::is_empty(o.outDir, ec) && !o.overwrite) {
    throw std::invalid_argument(o.outDir.string() +
                                " is not empty (pass --force to write into it anyway)");
  }
  fs::create_directories(o.outDir, ec);
  if (ec) throw std::runtime_error("cannot create " + o.outDir.string() + ": " + ec.message());
}

void writeIndex(const SynthOptions& o, const SynthReport& report) {
  nlohmann::ordered_json index = nlohmann::ordered_json::array();
  for (const auto& t : report.tasks) index.push_back(indexEntry(t, o.seed));
  writeFileAtomically(o.outDir / "index.json", index.dump(2) + "\n");
}

}  // namespace

nlohmann::ordered_json indexEntry(const SynthTask& t, std::uint64_t seed) {
  return {{"file", t.file},
          {"name", t.name},
          {"level", "synth"},
          {"ops", t.ops},
          {"description", t.description},
          {"compute_nodes", t.computeNodes},
          {"seed", seed},
          {"candidate", t.candidate},
          {"flops", t.flops},
          {"bytes", t.bytes}};
}

json SynthReport::toJson() const {
  json tasksJson = json::array();
  for (const auto& t : tasks) {
    json entry = indexEntry(t, 0);  // JSON reports are unordered like every other one
    entry.erase("seed");
    entry["ms"] = t.ms;
    tasksJson.push_back(std::move(entry));
  }
  return {{"tasks", tasksJson},
          {"coverage", coverage},
          {"unused", unused},
          {"operators", coverage.size()},
          {"rejected", rejected},
          {"candidates", candidates},
          {"seconds", seconds},
          {"solve_seconds", solveSeconds},
          {"check_seconds", checkSeconds},
          {"tasks_per_second", seconds > 0 ? static_cast<double>(tasks.size()) / seconds : 0.0},
          {"cancelled", cancelled}};
}

SynthReport synthesize(const SynthOptions& o, const SynthProgressFn& progress,
                       std::stop_token stop) {
  if (o.computeNodes < 1 || o.computeNodes > 200) {
    throw std::invalid_argument("--ops must be in [1, 200]");
  }
  if (o.count < 1) throw std::invalid_argument("--count must be at least 1");
  o.bounds.validate();
  prepareOutDir(o);
  const std::uint64_t maxCandidates =
      o.maxCandidates ? o.maxCandidates : 50ULL * static_cast<std::uint64_t>(o.count) + 100;

  const auto start = Clock::now();
  Scratch scratch;
  SynthReport report;
  for (const auto& op : catalogue()) report.coverage[std::string(op.name)] = 0;
  for (const char* kind : {"infeasible", "limit", "error", "nonfinite", "degenerate"}) {
    report.rejected[kind] = 0;
  }
  auto rejectedTotal = [&] {
    int n = 0;
    for (const auto& [kind, count] : report.rejected) n += count;
    return n;
  };
  auto report_progress = [&] {
    if (progress) {
      progress(
          {static_cast<int>(report.tasks.size()), o.count, report.candidates, rejectedTotal()});
    }
  };

  std::uint64_t next = 0;
  while (static_cast<int>(report.tasks.size()) < o.count && !stop.stop_requested()) {
    // Gather a batch of candidates with shapes, so one worker process checks several.
    const int remaining = o.count - static_cast<int>(report.tasks.size());
    const int batchSize = o.runCheck ? std::min(remaining + 2, 32) : 1;
    std::vector<Candidate> batch;
    while (static_cast<int>(batch.size()) < batchSize && !stop.stop_requested()) {
      if (next >= maxCandidates) {
        throw std::runtime_error("gave up after " + std::to_string(next) +
                                 " candidates with only " + std::to_string(report.tasks.size()) +
                                 " of " + std::to_string(o.count) +
                                 " tasks accepted: loosen the bounds or lower --ops");
      }
      const std::uint64_t index = next++;
      report.candidates = next;
      const Program program = sampleProgram(o.computeNodes, deriveSeed(o.seed, 2 * index));
      const auto solveStart = Clock::now();
      try {
        const ShapeSolution shapes =
            solveShapes(program, o.bounds, deriveSeed(o.seed, 2 * index + 1), stop);
        report.solveSeconds += secondsSince(solveStart);
        Candidate c;
        c.index = index;
        c.text =
            writeTask(program, shapes,
                      "seed " + std::to_string(o.seed) + ", candidate " + std::to_string(index));
        for (const auto& node : program.nodes) c.sequence.emplace_back(node.op->name);
        c.flops = shapes.flops;
        c.bytes = shapes.bytes;
        c.staged = scratch.root() / ("candidate_" + std::to_string(index) + ".py");
        writeFileAtomically(c.staged, c.text.source);
        batch.push_back(std::move(c));
      } catch (const ShapeError& e) {
        report.solveSeconds += secondsSince(solveStart);
        if (e.kind() == ShapeError::Kind::Cancelled) break;
        report.rejected[e.kind() == ShapeError::Kind::Infeasible ? "infeasible" : "limit"]++;
      }
    }
    if (stop.stop_requested()) break;

    std::vector<CheckResult> results(batch.size());
    if (o.runCheck) {
      std::vector<fs::path> files;
      for (const auto& c : batch) files.push_back(c.staged);
      const auto checkStart = Clock::now();
      try {
        results = checkTasks(files, scratch.root() / "check", o.check, stop);
      } catch (const CheckInfrastructureError&) {
        if (stop.stop_requested()) break;
        throw;
      }
      report.checkSeconds += secondsSince(checkStart);
    } else {
      for (auto& r : results) r.accepted = true;
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (static_cast<int>(report.tasks.size()) >= o.count) break;
      if (!results[i].accepted) {
        report.rejected[results[i].kind]++;
        continue;
      }
      const auto& c = batch[i];
      SynthTask t;
      t.id = static_cast<int>(report.tasks.size()) + 1;
      t.name = c.text.name;
      t.file = std::to_string(t.id) + "_" + t.name + ".py";
      t.description = c.text.description;
      t.ops = c.text.ops;
      t.sequence = c.sequence;
      t.computeNodes = o.computeNodes;
      t.candidate = c.index;
      t.flops = c.flops;
      t.bytes = c.bytes;
      t.ms = results[i].ms;
      writeFileAtomically(o.outDir / t.file, c.text.source);
      for (const auto& op : t.sequence) report.coverage[op]++;
      report.tasks.push_back(std::move(t));
    }
    report_progress();
  }
  report.cancelled = stop.stop_requested() && static_cast<int>(report.tasks.size()) < o.count;
  for (const auto& [op, uses] : report.coverage) {
    if (uses == 0) report.unused.push_back(op);
  }
  writeIndex(o, report);
  report.seconds = secondsSince(start);
  return report;
}

}  // namespace crucible::task_synth
