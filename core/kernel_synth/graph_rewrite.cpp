#include "core/kernel_synth/graph_rewrite.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/kernel_synth/graph_builder.h"
#include "core/kernel_synth/partition.h"
#include "core/kernel_synth/rewrite_attention.h"

namespace crucible::kernel_synth {

using nlohmann::json;

namespace {

const std::set<std::string> kLosses = {"mse_loss",
                                       "smooth_l1_loss",
                                       "kl_div",
                                       "huber_loss",
                                       "l1_loss",
                                       "cross_entropy",
                                       "nll_loss",
                                       "binary_cross_entropy_with_logits",
                                       "binary_cross_entropy"};
// Losses written here in terms of other ops, per sample or per element, then reduced.
const std::set<std::string> kComposedLosses = {"triplet_margin_loss", "cosine_embedding_loss",
                                               "hinge_embedding_loss"};
const std::set<std::string> kNestable = {"sum", "mean", "amax", "amin", "logsumexp", "prod"};

std::int64_t product(const Shape& s, const std::vector<int>& dims) {
  std::int64_t p = 1;
  for (int d : dims) p *= s[d];
  return p;
}

Shape reducedShape(const Shape& s, const std::vector<int>& dims, bool keepdim) {
  Shape out;
  for (int d = 0; d < static_cast<int>(s.size()); ++d) {
    const bool r = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!r) out.push_back(s[d]);
    if (r && keepdim) out.push_back(1);
  }
  return out;
}

std::optional<Shape> reducedAlt(const std::optional<Shape>& s, const std::vector<int>& dims,
                                bool keepdim) {
  if (!s) return std::nullopt;
  return reducedShape(*s, dims, keepdim);
}

/// A norm's order from its `p` / `ord` attribute: "fro" is 2, "inf" and "-inf" are infinities;
/// nullopt for the matrix norms ("nuc") and anything else.
std::optional<double> normOrder(const json& p) {
  if (p.is_number()) return p.get<double>();
  if (p == json("fro")) return 2.0;
  if (p == json("inf")) return std::numeric_limits<double>::infinity();
  if (p == json("-inf")) return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

class Rewriter : private GraphBuilder {
 public:
  explicit Rewriter(const OpGraph& graph) : GraphBuilder(graph), in_(graph) {}

  OpGraph run() {
    for (const OpNode& n : in_.nodes) {
      // A rewrite that gives up part way leaves nothing behind: the node stays as traced.
      const std::size_t mark = out_.nodes.size();
      if (rewrite(n)) continue;
      out_.nodes.resize(mark);
      out_.nodes.push_back(n);
    }
    return std::move(out_);
  }

 private:
  const OpGraph& in_;
  std::map<std::string, std::string> recurrent_;  // a recurrent layer's inputs and attrs -> node

  bool rewrite(const OpNode& n) {
    const std::string& op = n.op;
    if (kLosses.count(op) && n.attrs.value("reduction", json("mean")) != json("none")) {
      return loss(n);
    }
    if (kComposedLosses.count(op)) return composedLoss(n);
    if (op == "pairwise_distance") {
      return distance(n, n.name, n.inputs, n.attrs.value("p", json(2.0)),
                      n.attrs.value("eps", json(1e-6)), n.attrs.value("keepdim", false));
    }
    if (op == "scaled_dot_product_attention") return rewriteAttention(*this, n);
    if (op == "multi_head_attention") return rewriteMultiHeadAttention(*this, n);
    if (op == "norm" || op == "linalg_vector_norm") return norm(n);
    if (op == "normalize") return normalize(n);
    if (op == "stack") return stack(n);
    if (op == "diag") return diag(n);
    if (op == "recurrent") return shareRecurrent(n);
    if (op == "std") {  // the root of var over the same dims
      const std::string v = n.name + "__var";
      emit(n, v, "var", n.inputs, n.attrs, n.shape, n.altShape);
      pointwise(n, n.name, "sqrt", v);
      return true;
    }
    if (op == "rms_norm") return rmsNorm(n);
    if ((op == "max" || op == "min") && n.attrs.value("dim", json()).is_null()) {
      return reduction(n, n.name, op == "max" ? "amax" : "amin", inputRef(n), json(),
                       n.attrs.value("keepdim", false));
    }
    if (kNestable.count(op)) {
      return reduction(n, n.name, op, inputRef(n), n.attrs.value("dim", json()),
                       n.attrs.value("keepdim", false));
    }
    return false;
  }

  /// `op` over `dim` of `x`, written as `name` (with `from`'s shape): one node where the rows
  /// fit a program, nested ones otherwise. False (nothing written) when `dim` is not valid or a
  /// dim too long by itself cannot be cut evenly.
  bool reduction(const OpNode& from, const std::string& name, const std::string& op,
                 const std::string& x, const json& dim, bool keepdim) {
    if (x.empty()) return false;
    Shape s = shapeOf(x);
    std::optional<Shape> alt = altOf(x);
    auto dims = reducedDims(dim, s.size());
    if (!dims || s.empty()) return false;
    json attrs = from.op == op ? from.attrs : json::object();
    if (product(s, *dims) <= kLongestWholeRow) {
      attrs["dim"] = *dims;
      attrs["keepdim"] = keepdim;
      emit(from, name, op, {Operand{x, {}}}, attrs, reducedShape(s, *dims, keepdim),
           reducedAlt(alt, *dims, keepdim));
      return true;
    }
    // Dims too long by themselves are cut in two by a view, from the last so that the earlier
    // dims keep their places.
    std::string cur = x;
    bool cut = false;
    const std::vector<int> traced = *dims;
    for (auto it = traced.rbegin(); it != traced.rend(); ++it) {
      const int d = *it;
      if (s[d] <= kLongestWholeRow) continue;
      std::int64_t f = kLongestWholeRow;
      while (f > 1 && s[d] % f != 0) --f;
      if (f < 64 || (alt && (*alt)[d] != s[d])) return false;
      s[d] /= f;
      s.insert(s.begin() + d + 1, f);
      if (alt) {
        (*alt)[d] /= f;
        alt->insert(alt->begin() + d + 1, f);
      }
      for (int& e : *dims) e += e > d ? 1 : 0;
      dims->push_back(d + 1);
      std::sort(dims->begin(), dims->end());
      cur = emit(from, from.name + "__cut" + std::to_string(d), "reshape", {Operand{cur, {}}},
                 {{"shape", s}}, s, alt);
      cut = true;
    }
    // Stages: the longest run of the last remaining dims that fits a row, each kept as 1.
    std::vector<int> left = *dims;
    for (int stage = 1; product(s, left) > kLongestWholeRow; ++stage) {
      std::vector<int> these;
      std::int64_t length = 1;
      for (auto it = left.rbegin(); it != left.rend() && length * s[*it] <= kLongestWholeRow;
           ++it) {
        length *= s[*it];
        these.insert(these.begin(), *it);
      }
      attrs["dim"] = these;
      attrs["keepdim"] = true;
      const Shape next = reducedShape(s, these, true);
      alt = reducedAlt(alt, these, true);
      cur = emit(from, from.name + "__part" + std::to_string(stage), op, {Operand{cur, {}}}, attrs,
                 next, alt);
      s = next;
      for (int d : these) left.erase(std::find(left.begin(), left.end(), d));
    }
    // The last stage reduces what is left and drops (or keeps) every reduced dim; where a view
    // cut a dim, the kept form is a view of the dropped one.
    attrs["dim"] = *dims;
    attrs["keepdim"] = keepdim && !cut;
    const std::string last = keepdim && cut ? from.name + "__flat" : name;
    emit(from, last, op, {Operand{cur, {}}}, attrs, reducedShape(s, *dims, keepdim && !cut),
         reducedAlt(alt, *dims, keepdim && !cut));
    if (last != name) {
      emit(from, name, "reshape", {Operand{last, {}}}, {{"shape", from.shape}}, from.shape,
           from.altShape);
    }
    return true;
  }

  /// loss(reduction="none") per element (per sample for cross entropy), then its reduction.
  bool loss(const OpNode& n) {
    const json reduction = n.attrs.value("reduction", json("mean"));
    const std::string x = inputRef(n);
    if (x.empty() || n.inputs.size() < 2) return false;
    Shape each = shapeOf(x);
    std::optional<Shape> eachAlt = altOf(x);
    if (n.op == "cross_entropy" || n.op == "nll_loss") {
      if (each.size() != 2) return false;
      each = {each[0]};
      if (eachAlt) eachAlt = Shape{(*eachAlt)[0]};
    } else if (!n.inputs[1].isRef() || shapeOf(n.inputs[1].ref) != each) {
      return false;  // a broadcast target: its per-element shape is not the input's
    }
    json attrs = n.attrs;
    attrs["reduction"] = "none";
    const std::string e = emit(n, n.name + "__each", n.op, n.inputs, attrs, each, eachAlt);
    if (reduction == json("sum")) return reduceAll(n, n.name, "sum", e);
    if (reduction == json("mean")) return reduceAll(n, n.name, "mean", e);
    if (reduction == json("batchmean") && n.op == "kl_div" && !each.empty()) {
      // sum / batch = mean * (elements per sample): a constant whatever the batch
      const std::string mean = n.name + "__mean";
      if (!reduceAll(n, mean, "mean", e)) return false;
      const double perSample =
          static_cast<double>(product(each, *reducedDims(json(), each.size())) / each[0]);
      emit(n, n.name, "mul", {Operand{mean, {}}, Operand{{}, perSample}}, json::object(), n.shape,
           n.altShape);
      return true;
    }
    return false;
  }

  bool reduceAll(const OpNode& from, const std::string& name, const std::string& op,
                 const std::string& x) {
    return reduction(from, name, op, x, json(), false);
  }

  /// |x|^p summed over `dim`, then the p-th root (p = 2: squares and a square root; p = +-inf:
  /// the largest or smallest |x|), written as `name` with `keepdim`.
  bool normOf(const OpNode& n, const std::string& name, const std::string& x, const json& p,
              const json& dim, bool keepdim) {
    const auto order = normOrder(p);
    if (x.empty() || !order || *order == 0.0) return false;
    const std::string base = name + "__";  // from the output's name: a node may take two norms
    if (std::isinf(*order)) {
      const std::string a = pointwise(n, base + "abs", "abs", x);
      return reduction(n, name, *order > 0 ? "amax" : "amin", a, dim, keepdim);
    }
    if (*order < 0) return false;
    std::string powered;
    if (*order == 1.0) {
      powered = pointwise(n, base + "abs", "abs", x);
    } else if (*order == 2.0) {
      powered = pointwise(n, base + "square", "square", x);
    } else {
      powered = pointwise(n, base + "pow", "pow", pointwise(n, base + "abs", "abs", x),
                          {{"exponent", *order}});
    }
    if (*order == 1.0) return reduction(n, name, "sum", powered, dim, keepdim);
    if (!reduction(n, base + "sum", "sum", powered, dim, keepdim)) return false;
    if (*order == 2.0) {
      pointwise(n, name, "sqrt", base + "sum");
    } else {
      pointwise(n, name, "pow", base + "sum", {{"exponent", 1.0 / *order}});
    }
    return true;
  }

  bool norm(const OpNode& n) {
    const bool vector = n.op == "linalg_vector_norm";
    return normOf(n, n.name, inputRef(n), n.attrs.value(vector ? "ord" : "p", json(2.0)),
                  n.attrs.value("dim", json()), n.attrs.value("keepdim", false));
  }

  /// ||x1 - x2 + eps||_p over the last dim (F.pairwise_distance), written as `name`.
  bool distance(const OpNode& n, const std::string& name, const std::vector<Operand>& pair,
                const json& p, const json& eps, bool keepdim) {
    if (pair.size() < 2 || !pair[0].isRef() || !pair[1].isRef() || !eps.is_number()) return false;
    const std::string base = name + "__";
    const std::string d = op(n, base + "diff", "sub", {pair[0], pair[1]});
    const std::string shifted = op(n, base + "shifted", "add", {ref(d), number(eps.get<double>())});
    return normOf(n, name, shifted, p, json(-1), keepdim);
  }

  /// Triplet margin, cosine embedding and hinge embedding losses per sample (per element for
  /// the hinge), then their reduction.
  bool composedLoss(const OpNode& n) {
    const json reduction = n.attrs.value("reduction", json("mean"));
    if (reduction != json("none") && reduction != json("mean") && reduction != json("sum")) {
      return false;
    }
    const std::string each = reduction == json("none") ? n.name : n.name + "__each";
    const std::string base = n.name + "__";
    const json margin = n.attrs.value("margin", json(n.op == "hinge_embedding_loss" ? 1.0 : 0.0));
    if (!margin.is_number() || n.inputs.size() < 2) return false;
    const double m = margin.get<double>();
    if (n.op == "triplet_margin_loss") {
      if (n.inputs.size() < 3 || n.attrs.value("swap", false)) return false;
      const json p = n.attrs.value("p", json(2.0)), eps = n.attrs.value("eps", json(1e-6));
      if (!distance(n, base + "dap", {n.inputs[0], n.inputs[1]}, p, eps, false) ||
          !distance(n, base + "dan", {n.inputs[0], n.inputs[2]}, p, eps, false)) {
        return false;
      }
      const std::string gap = op(n, base + "gap", "sub", {ref(base + "dap"), ref(base + "dan")});
      const std::string shifted = op(n, base + "margin", "add", {ref(gap), number(m)});
      op(n, each, "clamp", {ref(shifted)}, {{"min", 0.0}, {"max", nullptr}});
    } else if (n.op == "cosine_embedding_loss") {
      if (n.inputs.size() < 3 || !n.inputs[2].isRef()) return false;
      const std::string x1 = inputRef(n);
      if (x1.empty() || !n.inputs[1].isRef() || shapeOf(x1).size() != 2) return false;
      const Shape perSample = {shapeOf(x1)[0]};
      std::optional<Shape> alt;
      if (const auto a = altOf(x1)) alt = Shape{(*a)[0]};
      const std::string cos = emit(n, base + "cos", "cosine_similarity", {n.inputs[0], n.inputs[1]},
                                   {{"dim", 1}, {"eps", 1e-8}}, perSample, alt);
      // torch: 1 - cos where the target is 1, max(0, cos - margin) where it is -1, else 0
      const std::string pos = op(n, base + "pos", "sub", {number(1.0), ref(cos)});
      const std::string neg =
          op(n, base + "neg", "clamp", {ref(op(n, base + "less", "sub", {ref(cos), number(m)}))},
             {{"min", 0.0}, {"max", nullptr}});
      const std::string y = n.inputs[2].ref;
      const std::string isPos = op(n, base + "is_pos", "eq", {ref(y), number(1.0)}, {}, "bool");
      const std::string isNeg = op(n, base + "is_neg", "eq", {ref(y), number(-1.0)}, {}, "bool");
      const std::string a = op(n, base + "a", "where", {ref(isPos), ref(pos), number(0.0)});
      const std::string b = op(n, base + "b", "where", {ref(isNeg), ref(neg), number(0.0)});
      op(n, each, "add", {ref(a), ref(b)});
    } else {  // hinge_embedding_loss, per element
      const std::string x = inputRef(n);
      if (x.empty() || !n.inputs[1].isRef()) return false;
      const std::string y = n.inputs[1].ref;
      const std::string room =
          op(n, base + "room", "clamp", {ref(op(n, base + "short", "sub", {number(m), ref(x)}))},
             {{"min", 0.0}, {"max", nullptr}});
      const std::string notPos = op(n, base + "not_pos", "ne", {ref(y), number(1.0)}, {}, "bool");
      const std::string notNeg = op(n, base + "not_neg", "ne", {ref(y), number(-1.0)}, {}, "bool");
      const std::string a = op(n, base + "a", "where", {ref(notPos), ref(room), number(0.0)});
      const std::string b = op(n, base + "b", "where", {ref(notNeg), ref(x), number(0.0)});
      emit(n, each, "add", {ref(a), ref(b)}, json::object(), shapeOf(x), altOf(x));
    }
    if (reduction == json("none")) return true;
    return reduceAll(n, n.name, reduction == json("sum") ? "sum" : "mean", each);
  }

  /// torch.stack: each piece given the new dim by a view, then their concatenation.
  bool stack(const OpNode& n) {
    const json& d = n.attrs.value("dim", json(0));
    const int rank = static_cast<int>(n.shape.size());
    if (!d.is_number_integer() || rank == 0) return false;
    const int dim = (d.get<int>() % rank + rank) % rank;
    std::vector<Operand> pieces;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const std::string x = n.inputs[i].ref;
      if (x.empty()) return false;
      Shape s = shapeOf(x);
      std::optional<Shape> alt = altOf(x);
      if (dim > static_cast<int>(s.size())) return false;
      s.insert(s.begin() + dim, 1);
      if (alt) alt->insert(alt->begin() + dim, 1);
      pieces.push_back({emit(n, n.name + "__piece" + std::to_string(i), "unsqueeze", {{x, {}}},
                             {{"dim", dim}}, s, alt),
                        {}});
    }
    emit(n, n.name, "cat", pieces, {{"dim", dim}}, n.shape, n.altShape);
    return true;
  }

  /// A recurrent layer whose other output was selected before (`out, (h, c) = lstm(x)`): the
  /// first node computes every output (its `also` attribute names this one), and this node
  /// stays as bookkeeping that no group computes.
  bool shareRecurrent(const OpNode& n) {
    json key = n.attrs;
    key.erase("output");
    std::string inputs;
    for (const auto& in : n.inputs) inputs += (in.isRef() ? in.ref : "-") + ",";
    key["inputs"] = inputs;
    const std::string id = key.dump();
    const auto seen = recurrent_.find(id);
    if (seen == recurrent_.end()) {
      recurrent_[id] = n.name;
      return false;  // the first: as traced
    }
    OpNode* first = nullptr;
    for (auto& m : out_.nodes) {
      if (m.name == seen->second) first = &m;
    }
    const std::string output = n.attrs.value("output", std::string());
    if (!first || output.empty() || first->attrs.value("output", std::string()) == output) {
      return false;
    }
    first->attrs["also"][output] = n.name;
    emit(n, n.name, "meta", {}, {{"target", "the " + output + " of " + first->name}}, n.shape,
         n.altShape);
    return true;
  }

  /// F.rms_norm: x * rsqrt(mean(x^2 over the normalized dims) + eps) [* weight]; eps None is
  /// the dtype's machine epsilon, as torch takes it.
  bool rmsNorm(const OpNode& n) {
    const std::string x = inputRef(n);
    const json& dims = n.attrs.value("normalized_shape", json());
    const std::size_t rank = shapeOf(x).size();
    const std::size_t k = dims.is_array() ? dims.size() : dims.is_number_integer() ? 1 : 0;
    if (x.empty() || k == 0 || k > rank) return false;
    json reduced = json::array();
    for (std::size_t d = rank - k; d < rank; ++d) reduced.push_back(static_cast<int>(d));
    const json eps = n.attrs.value("eps", json());
    const double e = eps.is_number() ? eps.get<double>() : 1.1920928955078125e-07;
    const std::string base = n.name + "__";
    const std::string sq = pointwise(n, base + "square", "square", x);
    if (!reduction(n, base + "mean", "mean", sq, reduced, true)) return false;
    const std::string shifted = op(n, base + "shifted", "add", {ref(base + "mean"), number(e)});
    const std::string scale = pointwise(n, base + "rsqrt", "rsqrt", shifted);
    const bool weighted = n.inputs.size() > 1 && n.inputs[1].isRef();  // (input, weight)
    const std::string normed = weighted ? base + "normed" : n.name;
    emit(n, normed, "mul", {ref(x), ref(scale)}, json::object(), shapeOf(x), altOf(x));
    if (weighted) {
      emit(n, n.name, "mul", {ref(normed), n.inputs[1]}, json::object(), shapeOf(x), altOf(x));
    }
    return true;
  }

  /// torch.diag: of a vector, the matrix with it on the diagonal; of a matrix, its diagonal
  /// (a view).
  bool diag(const OpNode& n) {
    const std::string x = inputRef(n);
    const json& k = n.attrs.value("diagonal", json(0));
    if (x.empty() || !k.is_number_integer()) return false;
    const std::size_t rank = shapeOf(x).size();
    if (rank == 1 && k == json(0)) {
      emit(n, n.name, "diag_embed", n.inputs, {{"diagonal", 0}}, n.shape, n.altShape);
      return true;
    }
    if (rank != 2) return false;
    emit(n, n.name, "diagonal", n.inputs, {{"offset", k}, {"dim1", 0}, {"dim2", 1}}, n.shape,
         n.altShape);
    return true;
  }

  /// F.normalize: x / max(||x||_p over dim, eps).
  bool normalize(const OpNode& n) {
    const std::string x = inputRef(n);
    const json eps = n.attrs.value("eps", json(1e-12));
    if (!eps.is_number()) return false;
    const std::string norm = n.name + "__norm";
    if (!normOf(n, norm, x, n.attrs.value("p", json(2.0)), n.attrs.value("dim", json(1)), true)) {
      return false;
    }
    const std::string floor =
        pointwise(n, n.name + "__floor", "clamp", norm, {{"min", eps}, {"max", nullptr}});
    emit(n, n.name, "div", {Operand{x, {}}, Operand{floor, {}}}, json::object(), shapeOf(x),
         altOf(x));
    return true;
  }
};

}  // namespace

OpGraph rewriteForLowering(OpGraph graph) {
  return Rewriter(graph).run();
}

}  // namespace crucible::kernel_synth
