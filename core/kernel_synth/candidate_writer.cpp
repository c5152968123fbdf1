#include "core/kernel_synth/candidate_writer.h"

#include <algorithm>
#include <sstream>

#include "core/kernel_synth/launch_reuse.h"

namespace crucible::kernel_synth {

using nlohmann::json;

namespace {

constexpr const char* kImports =
    "import torch\n"
    "import torch.nn as nn\n"
    "import triton\n"
    "import triton.language as tl\n";

constexpr const char* kHelpers =
    "def _cdiv(x, y):\n"
    "    \"\"\"triton.cdiv in plain integers: Triton's host helpers unwrap their arguments in\n"
    "    Python, several calls each, which the verifier's call profile sees one by one.\"\"\"\n"
    "    return (x + y - 1) // y\n"
    "\n"
    "\n"
    "def _next_power_of_2(n):\n"
    "    \"\"\"triton.next_power_of_2 in plain integers: the least power of two not below "
    "n.\"\"\"\n"
    "    n -= 1\n"
    "    for shift in (1, 2, 4, 8, 16, 32):\n"
    "        n |= n >> shift\n"
    "    return n + 1\n"
    "\n"
    "\n"
    "def _strides4(t):\n"
    "    \"\"\"A stack of matrices' strides as (batch 0, batch 1, row, column): a single matrix\n"
    "    has neither batch dim, a 3-d stack only batch 0.\"\"\"\n"
    "    s = tuple(t.stride())\n"
    "    return (0, 0, *s) if t.dim() == 2 else (s[0], 0, *s[1:]) if t.dim() == 3 else s\n"
    "\n"
    "\n"
    "def _prod(shape):\n"
    "    \"\"\"The number of elements of a shape (host bookkeeping, no tensor math).\"\"\"\n"
    "    n = 1\n"
    "    for d in shape:\n"
    "        n *= d\n"
    "    return n\n"
    "\n"
    "\n"
    "def _dense(t):\n"
    "    \"\"\"Whether t's elements fill its span of storage exactly, in some order of its dims,\n"
    "    so a pass over the storage in order visits each once (host bookkeeping).\"\"\"\n"
    "    span = 1\n"
    "    for size, stride in sorted(zip(t.shape, t.stride()), key=lambda d: d[1]):\n"
    "        if size != 1 and stride != span:\n"
    "            return False\n"
    "        span *= size\n"
    "    return span > 0\n"
    "\n"
    "\n"
    "def _flat(strides, dims, extents):\n"
    "    \"\"\"Whether a view's offsets along `dims` (of `extents`, the last fastest) form one\n"
    "    run: each dim's stride is the next one's times the next one's extent (host\n"
    "    bookkeeping).\"\"\"\n"
    "    return all(strides[a] == strides[b] * n for a, b, n in zip(dims, dims[1:], extents[1:]))\n"
    "\n"
    "\n"
    "# A GPU's shared memory per block, by device index: asking torch costs microseconds on\n"
    "# every launch, and the figure never changes.\n"
    "_SHARED_MEMORY = {}\n"
    "\n"
    "\n"
    "def _stages(wanted, stage_bytes, device):\n"
    "    \"\"\"Pipeline stages for a K loop holding stage_bytes of shared memory per stage: at\n"
    "    most `wanted`, and as many as fit this GPU's shared memory per block (host\n"
    "    bookkeeping; off a GPU, or where torch does not say, `wanted`).\"\"\"\n"
    "    if device.type != \"cuda\":\n"
    "        return wanted\n"
    "    index = device.index if device.index is not None else torch.cuda.current_device()\n"
    "    room = _SHARED_MEMORY.get(index)\n"
    "    if room is None:\n"
    "        props = torch.cuda.get_device_properties(device)\n"
    "        room = _SHARED_MEMORY[index] = getattr(props, \"shared_memory_per_block_optin\", 0)\n"
    "    return max(1, min(wanted, room // stage_bytes)) if room > 0 else wanted\n";

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

/// Where the batch size comes from at run time: `name.shape[j]` of the first input whose
/// dimension j is the batch constant (and follows it on the alternative batch), else
/// `name.shape[j] // k` of one whose dimension j is k times it (an input of B * H rows).
std::optional<std::string> batchSource(const OpGraph& g) {
  if (!g.batch || *g.batch <= 0) return std::nullopt;
  const auto b = *g.batch;
  for (const bool multiples : {false, true}) {
    for (const auto& in : g.inputs) {
      if (!in.altShape || in.altShape->size() != in.shape.size()) continue;
      for (std::size_t j = 0; j < in.shape.size(); ++j) {
        const auto d = in.shape[j], alt = (*in.altShape)[j];
        const auto k = d / b;
        if (k < 1 || d % b != 0 || alt != k * (b + 1) || (k == 1) == multiples) continue;
        const std::string dim = in.name + ".shape[" + std::to_string(j) + "]";
        return multiples ? dim + " // " + std::to_string(k) : dim;
      }
    }
  }
  return std::nullopt;
}

/// A parameter's attribute path as Python on self: numbered children of nn.Sequential and
/// nn.ModuleList are indexed ("network.0.weight" -> self.network[0].weight).
std::string attributePath(const std::string& path) {
  std::string out = "self";
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = std::min(path.find('.', start), path.size());
    const std::string part = path.substr(start, dot - start);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    out += index ? "[" + part + "]" : "." + part;
    start = dot + 1;
  }
  return out;
}

}  // namespace

std::optional<WrittenCandidate> writeCandidate(const OpGraph& graph, const Partition& partition,
                                               const json& source, const TileSet& tiles,
                                               const std::string& referenceName, std::string& why) {
  const auto nb = batchSource(graph);
  bool usesBatch = false;
  HostContext host;
  host.value = [&](const std::string& name) -> std::string {
    if (graph.node(name)) return "v_" + name;
    if (const auto* v = graph.value(name)) return v->parameter ? attributePath(name) : name;
    return name;
  };
  host.shape = [&](const Shape& shape, const std::optional<Shape>& alt) -> std::string {
    std::vector<std::string> dims;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const auto d = shape[i];
      if (!alt || alt->size() != shape.size() || (*alt)[i] == d) {
        dims.push_back(std::to_string(d));
        continue;
      }
      const auto b = graph.batch.value_or(0);
      if (!nb || b <= 0) {
        throw GraphError("a dimension of " + std::to_string(d) + " (" + std::to_string((*alt)[i]) +
                         " on a batch one larger) changes with the batch size, which no input's "
                         "shape gives as a whole multiple of the batch");
      }
      if (d % b != 0 || (*alt)[i] != d / b * (b + 1)) {
        throw GraphError("a dimension of " + std::to_string(d) + " (" + std::to_string((*alt)[i]) +
                         " on a batch of " + std::to_string(b + 1) + " instead of " +
                         std::to_string(b) +
                         ") changes with the batch size but is not a multiple of it");
      }
      usesBatch = true;
      dims.push_back(d == b ? "nb" : "nb * " + std::to_string(d / b));
    }
    if (dims.size() == 1) return "(" + dims[0] + ",)";
    std::string s = "(";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i];
    return s + ")";
  };
  host.device = graph.inputs.empty() ? "'cpu'" : graph.inputs.front().name + ".device";

  std::ostringstream kernels, body, plan;
  try {
    for (std::size_t i = 0; i < partition.groups.size(); ++i) {
      const FusionGroup& group = partition.groups[i];
      const Tiling& t = group.kind == GroupKind::Matmul ? tiles.matmul
                        : group.kind == GroupKind::Row  ? tiles.row
                        : group.kind == GroupKind::Conv ? tiles.conv
                                                        : tiles.pointwise;
      auto lowered = lowerGroup(graph, group, static_cast<int>(i), t, host, why);
      if (!lowered) return std::nullopt;
      if (!lowered->kernel.empty()) kernels << "\n\n" << lowered->kernel;
      body << lowered->launch;
      plan << lowered->plan << "\n";
    }
  } catch (const GraphError& e) {
    why = e.what();
    return std::nullopt;
  }

  std::ostringstream code;
  code << "# Written by Crucible's built-in synthesizer from " << referenceName << ".\n";
  code << "# Plan:\n";
  std::istringstream planLines(plan.str());
  for (std::string line; std::getline(planLines, line);) code << "#   " << line << "\n";
  code << kImports << "\n";
  const json& prelude = source.value("prelude", json::array());
  if (!prelude.empty()) {
    code << "# The reference's module-level statements, so __init__ sees the same names.\n";
    for (const auto& p : prelude) code << p.value("text", "");
    code << "\n";
  }
  code << "\n" << kHelpers << "\n\n" << kReusedLaunch << kernels.str() << "\n\n";
  if (const auto reused = reuseLaunchedKernels(kernels.str(), body.str()); !reused.empty()) {
    code << "# forward launches these through their compiled kernels (_Reused).\n"
         << reused << "\n\n";
  }
  code << "class ModelNew(nn.Module):\n";
  code
      << "    \"\"\"The reference's constructor, unchanged, so the same seed gives the same\n"
         "    parameters; forward only allocates, takes views and launches Triton kernels.\"\"\"\n";
  for (const auto& m : source.value("methods", json::array())) {
    std::string text = m.value("text", "");
    text = replaceAll(text, "super(Model, self)", "super(ModelNew, self)");
    code << "\n" << text;
  }
  std::vector<std::string> args = {"self"};
  for (const auto& in : graph.inputs) args.push_back(in.name);
  code << "\n    def forward(";
  for (std::size_t i = 0; i < args.size(); ++i) code << (i ? ", " : "") << args[i];
  code << "):\n";
  if (usesBatch) code << "        nb = " << *nb << "  # the batch size\n";
  code << body.str();
  std::vector<std::string> outs;
  for (const auto& o : graph.outputs) outs.push_back(host.value(o));
  code << "        return ";
  if (outs.size() == 1) {
    code << outs[0];
  } else {
    for (std::size_t i = 0; i < outs.size(); ++i) code << (i ? ", " : "") << outs[i];
  }
  code << "\n";
  return WrittenCandidate{code.str(), plan.str()};
}

}  // namespace crucible::kernel_synth
