#include "core/inspect/ir_run.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/inspect/ir_line_map.h"
#include "core/util/locations.h"
#include "core/verify/bad_input.h"
#include "core/verify/extract.h"
#include "core/verify/verifier.h"
#include "core/verify/worker_stage.h"

namespace crucible::inspect {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;

std::string textOf(const json& j, const char* key) {
  const json v = j.is_object() ? j.value(key, json()) : json();
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::optional<int> lineOf(const json& j, const char* key, int offset) {
  const json v = j.is_object() ? j.value(key, json()) : json();
  if (!v.is_number_integer()) return std::nullopt;
  return v.get<int>() + offset;
}

std::optional<IrError> errorOf(const json& e, const std::string& file, int offset) {
  if (e.is_string()) return IrError{"ir", e.get<std::string>(), file, std::nullopt};
  if (!e.is_object()) return std::nullopt;
  return IrError{textOf(e, "stage"), textOf(e, "message"), file, lineOf(e, "line", offset)};
}

/// The stage's own map for a level (opencl_c), checked against the text it describes.
IrLevel levelWithGivenMap(IrLevel level, const json& given, const std::string& file, int offset) {
  const std::size_t lines = splitIrLines(level.text).size();
  if (!given.is_array() || given.size() != lines) {
    level.error = IrError{"ir", "the line map does not match the text", file, std::nullopt};
    return level;
  }
  for (const json& line : given) {
    level.lineMap.push_back(line.is_number_integer() && line.get<int>() > 0
                                ? std::optional<int>(line.get<int>() + offset)
                                : std::nullopt);
  }
  return level;
}

IrLevel levelOf(const json& l, const std::vector<std::string>& stageFiles, const std::string& file,
                int offset) {
  IrLevel level{
      textOf(l, "name"), textOf(l, "text"), {}, errorOf(l.value("error", json()), file, offset)};
  if (level.error || level.text.empty()) return level;
  if (auto parsed = lineMapFor(level.name, level.text, stageFiles)) {
    level.lineMap = std::move(*parsed);
    for (auto& line : level.lineMap) {
      if (line) *line += offset;
    }
    return level;
  }
  return levelWithGivenMap(std::move(level), l.value("line_map", json()), file, offset);
}

KernelIr kernelOf(const json& k, std::vector<std::string> stageFiles, const std::string& file,
                  int offset) {
  KernelIr kernel{textOf(k, "name"),
                  lineOf(k, "def_line", offset),
                  textOf(k, "specialization"),
                  {},
                  errorOf(k.value("error", json()), file, offset)};
  if (const std::string seen = textOf(k, "file"); !seen.empty()) stageFiles.push_back(seen);
  const json levels = k.value("levels", json::array());
  if (levels.is_array()) {
    for (const json& l : levels) {
      if (l.is_object()) kernel.levels.push_back(levelOf(l, stageFiles, file, offset));
    }
  }
  return kernel;
}

std::string candidateCode(const IrRequest& request, int& lineOffset) {
  auto source = readFile(request.candidatePath);
  if (!source) throw BadInput(request.candidatePath + ": cannot read the file");
  auto extracted = extractCandidate(*source);
  if (!extracted) {
    throw BadInput(request.candidatePath +
                   ": a model response without a code block that defines ModelNew");
  }
  lineOffset = extracted->firstCodeLine - 1;
  return extracted->code;
}

std::string whyNoFacts(const StageResult& stage) {
  const auto& x = stage.execution;
  if (x.timedOut) return "it did not finish in time";
  if (x.memoryExceeded) return "it exceeded the memory limit";
  return "its process ended without reporting: " + textTail(x.stderrText);
}

/// The reference stage, for the inputs the candidate is called on (one set, on the CPU).
void referenceInputs(const IrRequest& request, ReferenceJob& job, StageRunner& runner,
                     std::stop_token stop) {
  const json refJob = {{"reference_path", job.referenceFile().string()},
                       {"out_dir", (job / "ref").string()},
                       {"inputs_dir", (job / "inputs").string()},
                       {"backend", "interpret"},
                       {"device", "cpu"},
                       {"seed", request.seed},
                       {"trials", 1},
                       {"timing_sets", 1},
                       {"timing_set_bytes", 0},
                       {"alt_batch", false}};
  auto stage = runner.run("reference", refJob, job / "ref", {(job / "src-ref").string()},
                          {(job / "ref").string(), (job / "inputs").string()},
                          std::max(600.0, request.timeoutSeconds), std::nullopt);
  if (stop.stop_requested() || stage.execution.cancelled) throw std::runtime_error("cancelled");
  if (!stage.facts.is_object()) {
    throw BadInput(request.referencePath +
                   ": the reference could not be run: " + whyNoFacts(stage));
  }
  const json error = stage.facts.value("error", json());
  if (error.is_object()) {
    if (error.value("stage", "") == "infrastructure") {
      throw std::runtime_error("the worker failed running the reference: " +
                               error.value("message", ""));
    }
    std::string where = request.referencePath;
    if (auto line = lineOf(error, "line", 0)) where += ":" + std::to_string(*line);
    throw BadInput(where + ": " + error.value("message", std::string("the reference failed")));
  }
}

std::uint64_t candidateMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  const std::uint64_t ram =
      pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages) * size : 8 * kGiB;
  return std::min<std::uint64_t>(8 * kGiB, ram * 6 / 10);
}

}  // namespace

std::string resolveIrBackend(const std::string& requested) {
  if (requested == "cuda") return requested;
  return resolveBackend(requested);
}

KernelIrReport reportFromFacts(const json& facts, const std::vector<std::string>& stageFiles,
                               const std::string& candidateFile, int lineOffset) {
  KernelIrReport r;
  r.candidateFile = candidateFile;
  if (!facts.is_object()) {
    r.error = IrError{"ir", "the ir stage reported nothing", candidateFile, std::nullopt};
    return r;
  }
  r.backend = textOf(facts, "backend");
  r.compiled = facts.value("compiled", json(false)).is_boolean() && facts.value("compiled", false);
  r.target = textOf(facts, "target");
  r.note = textOf(facts, "note");
  r.error = errorOf(facts.value("error", json()), candidateFile, lineOffset);
  const json kernels = facts.value("kernels", json::array());
  if (kernels.is_array()) {
    for (const json& k : kernels) {
      if (k.is_object()) r.kernels.push_back(kernelOf(k, stageFiles, candidateFile, lineOffset));
    }
  }
  return r;
}

KernelIrReport inspectKernels(const IrRequest& request, std::stop_token stop) {
  int lineOffset = 0;
  const std::string code = candidateCode(request, lineOffset);
  const std::string backend = resolveIrBackend(request.backend);
  const std::string tclLibrary = tclLibraryFor(backend);
  ReferenceJob job(request.referencePath, {"src-cand", "inputs", "ref", "ir"});
  const fs::path candFile = job / "src-cand" / "candidate.py";
  writeFile(candFile, code);
  StageRunner refRunner(job.worker(), job.dir(), "interpret", "", stop);
  referenceInputs(request, job, refRunner, stop);

  StageRunner runner(job.worker(), job.dir(), backend, tclLibrary, stop, request.openclDevice);
  const json irJob = {{"candidate_path", candFile.string()},
                      {"inputs_dir", (job / "inputs").string()},
                      {"out_dir", (job / "ir").string()},
                      {"backend", backend},
                      {"seed", request.seed}};
  auto stage =
      runner.run("ir", irJob, job / "ir", {(job / "src-cand").string(), (job / "inputs").string()},
                 {(job / "ir").string()}, request.timeoutSeconds, candidateMemory());
  if (stop.stop_requested() || stage.execution.cancelled) throw std::runtime_error("cancelled");
  if (!stage.facts.is_object()) {
    KernelIrReport r;
    r.backend = backend;
    r.candidateFile = request.candidatePath;
    r.error = IrError{"ir", "the candidate's ir stage failed: " + whyNoFacts(stage),
                      request.candidatePath, std::nullopt};
    return r;
  }
  const json error = stage.facts.value("error", json());
  if (error.is_object() && error.value("stage", "") == "infrastructure") {
    throw std::runtime_error("the worker failed in the ir stage: " + error.value("message", ""));
  }
  std::vector<std::string> files{candFile.string()};
  std::error_code ec;
  if (const auto real = fs::canonical(candFile, ec); !ec) files.push_back(real.string());
  return reportFromFacts(stage.facts, files, request.candidatePath, lineOffset);
}

}  // namespace crucible::inspect
