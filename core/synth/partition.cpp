#include "core/synth/partition.h"

#include <algorithm>
#include <map>
#include <set>

namespace crucible::synth {

using nlohmann::json;

namespace {

const std::set<std::string> kPointwise = {"relu",       "sigmoid",    "tanh",
                                          "exp",        "log",        "sqrt",
                                          "rsqrt",      "abs",        "neg",
                                          "silu",       "hardswish",  "hardsigmoid",
                                          "erf",        "log1p",      "expm1",
                                          "square",     "reciprocal", "gelu",
                                          "leaky_relu", "elu",        "softplus",
                                          "hardtanh",   "clamp",      "pow",
                                          "to_dtype",   "add",        "sub",
                                          "mul",        "div",        "maximum",
                                          "minimum",    "mse_loss",   "smooth_l1_loss",
                                          "kl_div",     "batch_norm", "identity",
                                          "sin",        "cos"};
const std::set<std::string> kRow = {"sum",           "mean",
                                    "amax",          "amin",
                                    "max",           "min",
                                    "argmax",        "argmin",
                                    "logsumexp",     "softmax",
                                    "log_softmax",   "layer_norm",
                                    "cumsum",        "cosine_similarity",
                                    "cross_entropy", "var"};
const std::set<std::string> kMatmul = {"linear", "matmul", "bmm", "mm"};
const std::set<std::string> kConv = {"conv1d",     "conv2d",     "max_pool1d",
                                     "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"};
const std::set<std::string> kView = {"transpose", "permute", "reshape",    "flatten",
                                     "unsqueeze", "squeeze", "contiguous", "t"};

bool training(const OpNode& n) {
  return n.attrs.value("training", json(false)) == json(true);
}

}  // namespace

const char* groupKindName(GroupKind kind) {
  switch (kind) {
    case GroupKind::View:
      return "view";
    case GroupKind::Pointwise:
      return "pointwise";
    case GroupKind::Row:
      return "row";
    case GroupKind::Matmul:
      return "matmul";
    case GroupKind::Conv:
      return "conv";
  }
  return "?";
}

OpKind opKind(const OpNode& node) {
  const std::string& op = node.op;
  if (op == "meta") return OpKind::Meta;
  if (kView.count(op)) return OpKind::View;
  if (op == "batch_norm") return training(node) ? OpKind::Row : OpKind::Pointwise;
  if (op == "mse_loss" || op == "smooth_l1_loss" || op == "kl_div") {
    return node.attrs.value("reduction", json("mean")) == json("none") ? OpKind::Pointwise
                                                                       : OpKind::Unsupported;
  }
  if (op == "cross_entropy") {
    return node.attrs.value("reduction", json("mean")) == json("none") ? OpKind::Row
                                                                       : OpKind::Unsupported;
  }
  if (kPointwise.count(op)) return OpKind::Pointwise;
  if (kRow.count(op)) return OpKind::Row;
  if (kMatmul.count(op)) return OpKind::Matmul;
  if (kConv.count(op)) return OpKind::Conv;
  return OpKind::Unsupported;
}

int rowDim(const OpNode& node, const OpGraph& graph) {
  if (node.inputs.empty() || !node.inputs[0].isRef()) return -1;
  Shape in;
  if (const auto* v = graph.value(node.inputs[0].ref)) in = v->shape;
  if (const auto* n = graph.node(node.inputs[0].ref)) in = n->shape;
  const int rank = static_cast<int>(in.size());
  if (rank == 0) return -1;
  json dim;
  if (node.op == "layer_norm") {
    const json& ns = node.attrs.value("normalized_shape", json());
    if (!ns.is_array() || ns.size() != 1) return -1;
    return rank - 1;
  }
  if (node.op == "batch_norm") return rank == 2 ? 0 : -1;  // training: over the batch
  if (node.op == "cross_entropy") return rank == 2 ? 1 : -1;
  dim = node.attrs.value("dim", json());
  if (dim.is_array() && dim.size() == 1) dim = dim[0];
  if (!dim.is_number_integer()) return -1;
  int d = dim.get<int>();
  if (d < 0) d += rank;
  return d >= 0 && d < rank ? d : -1;
}

bool isRowShape(const Shape& shape, const Shape& domain, int dim) {
  if (dim < 0 || dim >= static_cast<int>(domain.size())) return false;
  Shape kept = domain, dropped;
  kept[dim] = 1;
  for (int i = 0; i < static_cast<int>(domain.size()); ++i) {
    if (i != dim) dropped.push_back(domain[i]);
  }
  return shape == kept || shape == dropped;
}

Partition partition(const OpGraph& graph) {
  Partition p;
  std::map<std::string, int> groupOf;  // value -> group index
  auto latestProducer = [&](const OpNode& n) {
    int latest = -1;
    for (const auto& in : n.inputs) {
      if (!in.isRef()) continue;
      auto it = groupOf.find(in.ref);
      if (it != groupOf.end()) latest = std::max(latest, it->second);
    }
    return latest;
  };
  auto startGroup = [&](GroupKind kind, int index, Shape domain, int dim = -1) {
    FusionGroup g;
    g.kind = kind;
    g.nodes.push_back(index);
    g.domain = std::move(domain);
    g.reduceDim = dim;
    p.groups.push_back(std::move(g));
    return static_cast<int>(p.groups.size()) - 1;
  };

  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    const OpNode& n = graph.nodes[i];
    const OpKind kind = opKind(n);
    const std::string where = "line " + std::to_string(n.line) + ": ";
    if (kind == OpKind::Meta) continue;
    if (kind == OpKind::Unsupported) {
      std::string what = n.op == "unknown" ? n.attrs.value("target", std::string("?")) : n.op;
      if (n.attrs.contains("reduction")) what += " (reduction=" + n.attrs["reduction"].dump() + ")";
      if (n.op == "batch_norm") what += " (training, over several dims)";
      p.unsupported.push_back(where + what);
      continue;
    }
    if (n.dtype.empty() || n.shape.empty()) {
      p.unsupported.push_back(where + n.op + " (no tensor shape: a scalar or tuple result)");
      continue;
    }
    int g = -1;
    if (kind == OpKind::View) {
      g = startGroup(GroupKind::View, i, n.shape);
    } else if (kind == OpKind::Matmul) {
      g = startGroup(GroupKind::Matmul, i, n.shape);
    } else if (kind == OpKind::Conv) {
      g = startGroup(GroupKind::Conv, i, n.shape);
    } else if (kind == OpKind::Pointwise) {
      const int last = latestProducer(n);
      if (last >= 0) {
        FusionGroup& lg = p.groups[last];
        const bool fits =
            (lg.kind == GroupKind::Pointwise || lg.kind == GroupKind::Matmul ||
             lg.kind == GroupKind::Conv)
                ? n.shape == lg.domain
                : lg.kind == GroupKind::Row &&
                      (n.shape == lg.domain || isRowShape(n.shape, lg.domain, lg.reduceDim));
        // batch_norm's channel-aligned parameters are addressed on the domain's rank only.
        if (fits) g = last;
      }
      if (g < 0)
        g = startGroup(GroupKind::Pointwise, i, n.shape);
      else
        p.groups[g].nodes.push_back(i);
    } else {  // a row op
      const int d = rowDim(n, graph);
      if (d < 0) {
        p.unsupported.push_back(where + n.op + " over several dimensions or all of them");
        continue;
      }
      const std::string& x = n.inputs[0].ref;
      Shape domain;
      if (const auto* v = graph.value(x)) domain = v->shape;
      if (const auto* pn = graph.node(x)) domain = pn->shape;
      const int last = latestProducer(n);
      if (last >= 0) {
        FusionGroup& lg = p.groups[last];
        if (lg.kind == GroupKind::Row && lg.domain == domain && lg.reduceDim == d) {
          g = last;
        } else if (lg.kind == GroupKind::Pointwise && lg.domain == domain) {
          lg.kind = GroupKind::Row;  // the pointwise work runs inside the row program
          lg.reduceDim = d;
          g = last;
        }
      }
      if (g < 0)
        g = startGroup(GroupKind::Row, i, domain, d);
      else
        p.groups[g].nodes.push_back(i);
    }
    groupOf[n.name] = g;
  }

  // What each group writes: values read by another group or returned by forward.
  std::set<std::string> outputs(graph.outputs.begin(), graph.outputs.end());
  for (int gi = 0; gi < static_cast<int>(p.groups.size()); ++gi) {
    FusionGroup& g = p.groups[gi];
    if (g.kind == GroupKind::View) continue;
    for (int ni : g.nodes) {
      const std::string& name = graph.nodes[ni].name;
      bool used = outputs.count(name) > 0;
      for (const auto& other : graph.nodes) {
        for (const auto& in : other.inputs) {
          if (in.ref != name) continue;
          auto it = groupOf.find(other.name);
          if (it != groupOf.end() && it->second != gi) used = true;
        }
      }
      if (used) g.stores.push_back(name);
    }
  }
  return p;
}

}  // namespace crucible::synth
