#include "core/kernel_synth/partition.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/kernel_synth/pointwise_expr.h"

namespace crucible::kernel_synth {

using nlohmann::json;

namespace {

const std::set<std::string> kPointwise = {"relu",
                                          "sigmoid",
                                          "tanh",
                                          "exp",
                                          "log",
                                          "sqrt",
                                          "rsqrt",
                                          "abs",
                                          "neg",
                                          "silu",
                                          "hardswish",
                                          "hardsigmoid",
                                          "erf",
                                          "log1p",
                                          "expm1",
                                          "square",
                                          "reciprocal",
                                          "gelu",
                                          "leaky_relu",
                                          "elu",
                                          "softplus",
                                          "hardtanh",
                                          "clamp",
                                          "pow",
                                          "to_dtype",
                                          "add",
                                          "sub",
                                          "mul",
                                          "div",
                                          "maximum",
                                          "minimum",
                                          "mse_loss",
                                          "smooth_l1_loss",
                                          "kl_div",
                                          "batch_norm",
                                          "identity",
                                          "sin",
                                          "cos",
                                          "mish",
                                          "selu",
                                          "relu6",
                                          "softsign",
                                          "logsigmoid",
                                          "tanhshrink",
                                          "hardshrink",
                                          "softshrink",
                                          "celu",
                                          "huber_loss",
                                          "l1_loss",
                                          "full",
                                          "flip",
                                          "tril",
                                          "triu",
                                          "diag_embed",
                                          "eq",
                                          "ne",
                                          "gt",
                                          "ge",
                                          "lt",
                                          "le",
                                          "where",
                                          "masked_fill",
                                          "logical_not",
                                          "binary_cross_entropy_with_logits",
                                          "binary_cross_entropy",
                                          "addcmul",
                                          "lerp"};
const std::set<std::string> kRow = {
    "sum",           "mean",       "amax",       "amin",          "max",
    "min",           "argmax",     "argmin",     "logsumexp",     "softmax",
    "log_softmax",   "layer_norm", "cumsum",     "cumprod",       "cosine_similarity",
    "cross_entropy", "var",        "group_norm", "instance_norm", "prod"};
const std::set<std::string> kMatmul = {"linear", "matmul", "bmm", "mm"};
const std::set<std::string> kConv = {"conv1d",
                                     "conv2d",
                                     "conv3d",
                                     "conv_transpose1d",
                                     "conv_transpose2d",
                                     "conv_transpose3d",
                                     "max_pool1d",
                                     "max_pool2d",
                                     "max_pool3d",
                                     "avg_pool1d",
                                     "avg_pool2d",
                                     "avg_pool3d",
                                     "adaptive_avg_pool1d",
                                     "adaptive_avg_pool2d",
                                     "adaptive_avg_pool3d",
                                     "adaptive_max_pool1d",
                                     "adaptive_max_pool2d",
                                     "adaptive_max_pool3d"};
const std::set<std::string> kView = {"transpose", "permute",  "reshape",    "flatten",
                                     "unsqueeze", "squeeze",  "contiguous", "t",
                                     "index",     "diagonal", "expand",     "expand_as"};

bool training(const OpNode& n) {
  return n.attrs.value("training", json(false)) == json(true);
}

bool hasCoordinateReads(const FusionGroup& g, const OpGraph& graph) {
  for (int i : g.nodes) {
    if (readsByCoordinates(graph.nodes[i].op)) return true;
  }
  return false;
}

}  // namespace

bool readsByCoordinates(const std::string& op) {
  return op == "cat" || op == "flip" || op == "tril" || op == "triu" || op == "diag_embed" ||
         op == "pad";
}

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
    case GroupKind::Recurrent:
      return "recurrent";
  }
  return "?";
}

OpKind opKind(const OpNode& node) {
  const std::string& op = node.op;
  if (op == "meta") return OpKind::Meta;
  if (op == "recurrent") return OpKind::Recurrent;
  if (kView.count(op)) return OpKind::View;
  if (op == "batch_norm") return training(node) ? OpKind::Row : OpKind::Pointwise;
  if (op == "instance_norm") {
    // Without input statistics (running statistics in eval) it would be batch norm's eval form.
    return node.attrs.value("use_input_stats", json(true)) == json(true) ? OpKind::Row
                                                                         : OpKind::Unsupported;
  }
  if (op == "mse_loss" || op == "smooth_l1_loss" || op == "kl_div" || op == "huber_loss" ||
      op == "l1_loss" || op == "binary_cross_entropy_with_logits" || op == "binary_cross_entropy") {
    return node.attrs.value("reduction", json("mean")) == json("none") ? OpKind::Pointwise
                                                                       : OpKind::Unsupported;
  }
  if (op == "cross_entropy" || op == "nll_loss") {
    // Class weights and an ignored class other than torch's default (-100, which no class
    // index reaches) change which terms count and how the mean divides.
    const bool weighted = node.inputs.size() > 2 && !node.inputs[2].isNone();
    const bool ignoring = node.attrs.value("ignore_index", json(-100)) != json(-100);
    return node.attrs.value("reduction", json("mean")) == json("none") && !weighted && !ignoring
               ? OpKind::Row
               : OpKind::Unsupported;
  }
  if (op == "pad") {
    // Zero padding (or cropping) of dims that do not follow the batch: a read at shifted
    // coordinates. Other modes read mirrored or clamped coordinates, other values need a select.
    // The fill value traces as a second input (a constant, or None for zeros).
    const bool zero = node.inputs.size() < 2 || node.inputs[1].isNone() ||
                      (node.inputs[1].number && *node.inputs[1].number == 0.0);
    return node.attrs.value("mode", json("constant")) == json("constant") && zero &&
                   node.attrs.value("pad", json()).is_array()
               ? OpKind::Pointwise
               : OpKind::Unsupported;
  }
  if (op == "cat") {
    // Pieces along a dim that grows with the batch would need their offsets from the batch.
    const json& d = node.attrs.value("dim", json());
    const int rank = static_cast<int>(node.shape.size());
    if (!d.is_number_integer() || rank == 0) return OpKind::Unsupported;
    const int dim = (d.get<int>() % rank + rank) % rank;
    const bool follows = node.altShape && (*node.altShape)[dim] != node.shape[dim];
    return follows ? OpKind::Unsupported : OpKind::Pointwise;
  }
  if (kPointwise.count(op)) return OpKind::Pointwise;
  if (kRow.count(op)) return OpKind::Row;
  if (kMatmul.count(op)) return OpKind::Matmul;
  if (kConv.count(op)) return OpKind::Conv;
  return OpKind::Unsupported;
}

namespace {

std::vector<int> range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i < to; ++i) v.push_back(i);
  return v;
}

/// A row op's `dim` as sorted dims; empty when it is absent (graph_rewrite spells out the dims
/// of every reduction it takes), out of range or names a dim twice.
std::vector<int> dimsOf(const json& dim, int rank) {
  if (dim.is_null() || (dim.is_array() && dim.empty())) return {};
  return reducedDims(dim, rank).value_or(std::vector<int>{});
}

}  // namespace

std::optional<std::vector<int>> reducedDims(const json& dim, std::size_t rank) {
  const int r = static_cast<int>(rank);
  if (dim.is_null() || (dim.is_array() && dim.empty())) return range(0, r);
  std::vector<int> dims;
  for (const auto& d : dim.is_array() ? dim : json::array({dim})) {
    if (!d.is_number_integer()) return std::nullopt;
    int v = d.get<int>();
    if (v < 0) v += r;
    if (v < 0 || v >= r) return std::nullopt;
    dims.push_back(v);
  }
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end()) return std::nullopt;
  return dims;
}

std::optional<RowReduction> rowReduction(const OpNode& node, const OpGraph& graph) {
  if (node.inputs.empty() || !node.inputs[0].isRef()) return std::nullopt;
  Shape in;
  if (const auto* v = graph.value(node.inputs[0].ref)) in = v->shape;
  if (const auto* n = graph.node(node.inputs[0].ref)) in = n->shape;
  const int rank = static_cast<int>(in.size());
  if (rank == 0) return std::nullopt;
  RowReduction r;
  const std::string& op = node.op;
  if (op == "layer_norm") {
    const json& ns = node.attrs.value("normalized_shape", json());
    const int k = ns.is_array() ? static_cast<int>(ns.size()) : ns.is_number_integer() ? 1 : 0;
    if (k < 1 || k > rank) return std::nullopt;
    r.dims = range(rank - k, rank);
  } else if (op == "batch_norm") {  // training: statistics over everything but the channel
    if (rank < 2) return std::nullopt;
    r.dims = range(2, rank);
    r.dims.insert(r.dims.begin(), 0);
  } else if (op == "instance_norm") {
    if (rank < 3) return std::nullopt;
    r.dims = range(2, rank);
  } else if (op == "group_norm") {
    const json& groups = node.attrs.value("num_groups", json());
    if (rank < 2 || !groups.is_number_integer()) return std::nullopt;
    const std::int64_t g = groups.get<std::int64_t>();
    if (g < 1 || in[1] % g != 0) return std::nullopt;
    r.dims = range(2, rank);
    if (g == 1) {
      r.dims.insert(r.dims.begin(), 1);
    } else {
      r.splitDim = 1;
      r.splitParts = g;
    }
  } else if (op == "cross_entropy" || op == "nll_loss") {
    if (rank != 2) return std::nullopt;
    r.dims = {1};
  } else {
    r.dims = dimsOf(node.attrs.value("dim", json()), rank);
    // Several dims at once only where the result does not depend on an order within the row.
    static const std::set<std::string> multi = {"sum", "mean",      "amax", "amin",
                                                "var", "logsumexp", "prod"};
    if (r.dims.empty() || (r.dims.size() > 1 && !multi.count(op))) return std::nullopt;
  }
  return r;
}

bool isRowShape(const Shape& shape, const Shape& domain, const RowReduction& reduce) {
  if (reduce.splitDim >= 0 || reduce.dims.empty()) return false;
  Shape kept = domain, dropped;
  for (int d : reduce.dims) {
    if (d < 0 || d >= static_cast<int>(domain.size())) return false;
    kept[d] = 1;
  }
  for (int i = 0; i < static_cast<int>(domain.size()); ++i) {
    if (std::find(reduce.dims.begin(), reduce.dims.end(), i) == reduce.dims.end())
      dropped.push_back(domain[i]);
  }
  return shape == kept || shape == dropped;
}

namespace {

/// What an op the synthesizer cannot lower is, in the words of its refusal: the op and the
/// argument that keeps it out.
std::string unsupportedWhat(const OpNode& n) {
  std::string what = n.op == "unknown" ? n.attrs.value("target", std::string("?")) : n.op;
  const bool classLoss = n.op == "cross_entropy" || n.op == "nll_loss";
  if (classLoss && n.inputs.size() > 2 && !n.inputs[2].isNone()) {
    what += " with class weights";
  } else if (classLoss && n.attrs.value("ignore_index", json(-100)) != json(-100)) {
    what += " with ignore_index=" + n.attrs["ignore_index"].dump();
  } else if (n.attrs.contains("reduction")) {
    what += " (reduction=" + n.attrs["reduction"].dump() + ")";
  }
  if (n.op == "instance_norm") what += " (with running statistics)";
  if (n.op == "pad") {
    const bool filled = n.inputs.size() > 1 && n.inputs[1].number;
    what += " (mode=" + n.attrs.value("mode", json("constant")).dump() +
            (filled ? ", value=" + floatLiteral(*n.inputs[1].number) : std::string()) +
            "): only zero padding";
  }
  if (n.op == "cat") what += " along the batch's dimension";
  return what;
}

}  // namespace

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
  auto startGroup = [&](GroupKind kind, int index, Shape domain, RowReduction reduce = {}) {
    FusionGroup g;
    g.kind = kind;
    g.nodes.push_back(index);
    g.domain = std::move(domain);
    g.reduce = std::move(reduce);
    p.groups.push_back(std::move(g));
    return static_cast<int>(p.groups.size()) - 1;
  };

  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    const OpNode& n = graph.nodes[i];
    const OpKind kind = opKind(n);
    const std::string where = "line " + std::to_string(n.line) + ": ";
    if (kind == OpKind::Meta) continue;
    if (kind == OpKind::Unsupported) {
      p.unsupported.push_back(where + unsupportedWhat(n));
      continue;
    }
    if (n.dtype.empty()) {  // a 0-d tensor (a loss's mean) has a dtype and an empty shape
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
    } else if (kind == OpKind::Recurrent) {
      g = startGroup(GroupKind::Recurrent, i, n.shape);
    } else if (kind == OpKind::Pointwise) {
      // A cat, flip, ... reads by coordinates, so it starts a group (what it reads is stored
      // first); what follows it on its shape fuses after it.
      const int last = readsByCoordinates(n.op) ? -1 : latestProducer(n);
      if (last >= 0) {
        FusionGroup& lg = p.groups[last];
        const bool fits =
            (lg.kind == GroupKind::Pointwise || lg.kind == GroupKind::Matmul ||
             lg.kind == GroupKind::Conv)
                ? n.shape == lg.domain
                : lg.kind == GroupKind::Row &&
                      (n.shape == lg.domain || isRowShape(n.shape, lg.domain, lg.reduce));
        // batch_norm's channel-aligned parameters are addressed on the domain's rank only.
        if (fits) g = last;
      }
      if (g < 0)
        g = startGroup(GroupKind::Pointwise, i, n.shape);
      else
        p.groups[g].nodes.push_back(i);
    } else {  // a row op
      const auto r = rowReduction(n, graph);
      if (!r) {
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
        if (lg.kind == GroupKind::Row && lg.domain == domain && lg.reduce == *r) {
          g = last;
        } else if (lg.kind == GroupKind::Pointwise && lg.domain == domain &&
                   !hasCoordinateReads(lg, graph)) {
          lg.kind = GroupKind::Row;  // the pointwise work runs inside the row program
          lg.reduce = *r;
          g = last;
        }
      }
      if (g < 0)
        g = startGroup(GroupKind::Row, i, domain, *r);
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

}  // namespace crucible::kernel_synth
