#include "core/kernel_synth/synthesizer.h"

#include <algorithm>
#include <filesystem>

#include "core/kernel_synth/candidate_writer.h"
#include "core/kernel_synth/graph_rewrite.h"
#include "core/kernel_synth/op_graph.h"
#include "core/kernel_synth/partition.h"
#include "core/kernel_synth/tile_menu.h"
#include "core/util/locations.h"
#include "core/verify/verifier.h"
#include "core/verify/worker_stage.h"

namespace crucible::kernel_synth {

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

SynthResult synthesizeFromTrace(const json& graphJson, const json& source,
                                const SynthRequest& request, const std::string& referenceName) {
  SynthResult result;
  result.graph = graphJson;
  OpGraph graph;
  try {
    graph = rewriteForLowering(parseGraph(graphJson));
  } catch (const GraphError& e) {
    result.unsupported.push_back(std::string("the traced graph: ") + e.what());
    return result;
  }
  const Partition p = partition(graph);
  result.unsupported = p.unsupported;
  if (!result.unsupported.empty()) return result;
  if (!p.groups.empty() && std::all_of(p.groups.begin(), p.groups.end(), [](const auto& group) {
        return group.kind == GroupKind::View;
      })) {
    // A candidate must launch a kernel, and views move no data: nothing to write one for.
    const OpNode& last = graph.nodes[p.groups.back().nodes.back()];
    result.unsupported.push_back("line " + std::to_string(last.line) +
                                 ": the reference only takes views of its inputs (" + last.op +
                                 "), which compute nothing for a kernel to do");
    return result;
  }
  for (const TileSet& tiles : tileSetsFor(graph, p, request.backend, request.maxCandidates)) {
    std::string why;
    auto written = writeCandidate(graph, p, source, tiles, referenceName, why);
    if (!written) {
      result.unsupported.push_back(why);
      result.candidates.clear();
      return result;
    }
    result.candidates.push_back({written->code, written->plan, tileLabel(graph, p, tiles)});
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

}  // namespace crucible::kernel_synth
