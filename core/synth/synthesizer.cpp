#include "core/synth/synthesizer.h"

#include <filesystem>

#include "core/synth/candidate_writer.h"
#include "core/synth/op_graph.h"
#include "core/synth/partition.h"
#include "core/util/locations.h"
#include "core/verify/verifier.h"
#include "core/verify/worker_stage.h"

namespace crucible::synth {

namespace fs = std::filesystem;
using nlohmann::json;

void to_json(json& j, const SynthCandidate& c) {
  j = {{"code", c.code}, {"plan", c.plan}, {"label", c.label}};
}
void from_json(const json& j, SynthCandidate& c) {
  c.code = j.value("code", "");
  c.plan = j.value("plan", "");
  c.label = j.value("label", "");
}
void to_json(json& j, const SynthResult& r) {
  j = {{"candidates", r.candidates}, {"unsupported", r.unsupported}, {"graph", r.graph}};
}
void from_json(const json& j, SynthResult& r) {
  r.candidates = j.value("candidates", std::vector<SynthCandidate>{});
  r.unsupported = j.value("unsupported", std::vector<std::string>{});
  r.graph = j.value("graph", json());
}

namespace {

/// Tile options, best first for the backend: the interpreter pays per program, so it gets few
/// large programs; GPUs get shapes that fill the machine.
struct TileMenu {
  std::vector<Tiling> pointwise, row, matmul;
};

TileMenu menuFor(const std::string& backend) {
  auto pw = [](int block, int warps) {
    Tiling t;
    t.block = block;
    t.warps = warps;
    return t;
  };
  auto rw = [](int rows, int warps) {
    Tiling t;
    t.rows = rows;
    t.warps = warps;
    return t;
  };
  auto mm = [](int m, int n, int k, int warps) {
    Tiling t;
    t.blockM = m;
    t.blockN = n;
    t.blockK = k;
    t.warps = warps;
    return t;
  };
  if (backend == "cuda") {
    return {{pw(1024, 4), pw(2048, 8), pw(512, 4), pw(4096, 8)},
            {rw(1, 4), rw(4, 4), rw(16, 8), rw(2, 8)},
            {mm(64, 64, 32, 4), mm(128, 64, 32, 4), mm(64, 128, 32, 8), mm(32, 32, 32, 4)}};
  }
  if (backend == "opencl") {
    // One program is one OpenCL work-item on a CPU device: the cores are filled by programs, so
    // blocks stay small enough that even small problems launch several of them. Products keep
    // 128x128 tiles: their micro-kernel amortises packing (3x faster than 64x64 at 1024^3).
    return {{pw(1024, 4), pw(4096, 4), pw(256, 4), pw(16384, 8)},
            {rw(4, 4), rw(1, 4), rw(16, 4), rw(64, 8)},
            {mm(128, 128, 64, 8), mm(64, 64, 32, 4), mm(32, 32, 32, 4), mm(64, 32, 64, 4)}};
  }
  return {{pw(16384, 8), pw(4096, 4), pw(1024, 4), pw(2048, 4)},
          {rw(64, 8), rw(16, 4), rw(4, 4), rw(1, 4)},
          {mm(128, 128, 64, 8), mm(64, 64, 32, 4), mm(32, 32, 32, 4), mm(64, 32, 64, 4)}};
}

std::string labelOf(const Partition& p, const Tiling& pw, const Tiling& row, const Tiling& mm) {
  bool hasPw = false, hasRow = false, hasMm = false;
  for (const auto& g : p.groups) {
    hasPw |= g.kind == GroupKind::Pointwise || g.kind == GroupKind::Conv;
    hasRow |= g.kind == GroupKind::Row;
    hasMm |= g.kind == GroupKind::Matmul;
  }
  std::vector<std::string> parts;
  if (hasMm) {
    parts.push_back("BLOCK=" + std::to_string(mm.blockM) + "x" + std::to_string(mm.blockN) + "x" +
                    std::to_string(mm.blockK) + " warps=" + std::to_string(mm.warps));
  }
  if (hasRow)
    parts.push_back("ROWS=" + std::to_string(row.rows) + " warps=" + std::to_string(row.warps));
  if (hasPw)
    parts.push_back("BLOCK=" + std::to_string(pw.block) + " warps=" + std::to_string(pw.warps));
  std::string s;
  for (const auto& part : parts) s += (s.empty() ? "" : "; ") + part;
  return s.empty() ? "views only" : s;
}

}  // namespace

SynthResult synthesizeFromTrace(const json& graphJson, const json& source,
                                const SynthRequest& request, const std::string& referenceName) {
  SynthResult result;
  result.graph = graphJson;
  OpGraph graph;
  try {
    graph = parseGraph(graphJson);
  } catch (const GraphError& e) {
    result.unsupported.push_back(std::string("the traced graph: ") + e.what());
    return result;
  }
  const Partition p = partition(graph);
  result.unsupported = p.unsupported;
  if (!result.unsupported.empty()) return result;
  const TileMenu menu = menuFor(request.backend);
  for (int i = 0; i < request.maxCandidates && i < static_cast<int>(menu.matmul.size()); ++i) {
    const Tiling& pw = menu.pointwise[i % menu.pointwise.size()];
    const Tiling& row = menu.row[i % menu.row.size()];
    const Tiling& mm = menu.matmul[i % menu.matmul.size()];
    std::string why;
    auto written = writeCandidate(graph, p, source, pw, row, mm, referenceName, why);
    if (!written) {
      result.unsupported.push_back(why);
      result.candidates.clear();
      return result;
    }
    const std::string label = labelOf(p, pw, row, mm);
    bool duplicate = false;
    for (const auto& c : result.candidates) duplicate |= c.label == label;
    if (duplicate) continue;  // a graph with only views has one candidate
    result.candidates.push_back({written->code, written->plan, label});
  }
  return result;
}

SynthResult synthesize(const SynthRequest& request, std::stop_token stop,
                       const std::function<void(const std::string&)>& progress) {
  if (request.maxCandidates < 1) throw BadInput("-n must be at least 1");
  ReferenceJob job(request.referencePath, {"trace"});
  // The trace runs the reference on the CPU whatever the target backend: shapes are the same.
  StageRunner runner(job.worker(), job.dir(), "interpret", "", stop);
  if (progress) progress("tracing " + request.referencePath);
  auto stage = runner.run(
      "trace", {{"reference_path", job.referenceFile().string()}, {"seed", request.seed}},
      job / "trace", {(job / "src-ref").string()}, {(job / "trace").string()},
      request.timeoutSeconds, std::nullopt);
  if (stage.execution.cancelled) throw std::runtime_error("cancelled");
  if (!stage.facts.is_object()) {
    const auto& x = stage.execution;
    const std::string why =
        x.timedOut         ? "it did not finish in time"
        : x.memoryExceeded ? "it exceeded the memory limit"
                           : "the worker ended without reporting: " + x.stderrText.substr(0, 600);
    throw BadInput(request.referencePath + ": the reference could not be traced: " + why);
  }
  const json& error = stage.facts.value("error", json());
  if (!error.is_null()) {
    if (error.value("stage", "") == "infrastructure") {
      throw std::runtime_error("the worker failed tracing the reference: " +
                               error.value("message", ""));
    }
    std::string where = request.referencePath;
    if (error.contains("line") && error["line"].is_number_integer()) {
      where += ":" + std::to_string(error["line"].get<int>());
    }
    throw BadInput(where + ": " + error.value("message", std::string("the reference failed")));
  }
  if (progress) progress("lowering the traced graph");
  return synthesizeFromTrace(stage.facts.value("graph", json()),
                             stage.facts.value("source", json()), request,
                             fs::path(request.referencePath).filename().string());
}

}  // namespace crucible::synth
