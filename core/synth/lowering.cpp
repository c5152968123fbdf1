#include "core/synth/lowering.h"

#include <map>
#include <set>
#include <sstream>

#include "core/synth/pointwise_expr.h"

namespace crucible::synth {

using nlohmann::json;

namespace {

const char* kHost = "        ";  // forward's body
const char* kBody = "    ";      // a kernel's body

std::string var(const std::string& name) {
  return "v_" + name;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

Shape shapeOfValue(const OpGraph& g, const std::string& name) {
  if (const auto* n = g.node(name)) return n->shape;
  if (const auto* v = g.value(name)) return v->shape;
  return {};
}

std::optional<Shape> altShapeOfValue(const OpGraph& g, const std::string& name) {
  if (const auto* n = g.node(name)) return n->altShape;
  if (const auto* v = g.value(name)) return v->parameter ? std::optional(v->shape) : v->altShape;
  return std::nullopt;
}

std::string dtypeOf(const OpGraph& g, const std::string& name) {
  if (const auto* n = g.node(name)) return n->dtype;
  if (const auto* v = g.value(name)) return v->dtype;
  return "";
}

bool isFloat(const std::string& dtype) {
  return dtype == "float32" || dtype == "float16" || dtype == "bfloat16" || dtype == "float64";
}

/// `.to(tl.float32)` for half-precision loads: the chain computes in fp32.
std::string widen(const std::string& dtype) {
  return dtype == "float16" || dtype == "bfloat16" ? ".to(tl.float32)" : "";
}

/// A tensor operand read by a kernel: a pointer argument plus one stride per domain dimension.
struct KernelOperand {
  std::string value;      // graph value
  std::string hostView;   // Python expression of the broadcast view passed to the kernel
  std::string arg;        // kernel parameter name
  bool rowSpace = false;  // row programs: read once per row (col 0)
};

/// The shared bookkeeping of a group: values it computes, operands it reads, values it writes.
class GroupState {
 public:
  GroupState(const OpGraph& graph, const FusionGroup& group) {
    for (int i : group.nodes) inside_.insert(graph.nodes[i].name);
  }
  bool inside(const std::string& name) const { return inside_.count(name) > 0; }

  /// The kernel variable of an operand, registering an external load when needed.
  std::string operand(const Operand& o, bool rowSpace, const std::string& hostView) {
    if (o.isNone()) return "None";
    if (!o.isRef()) return floatLiteral(*o.number);
    if (inside(o.ref)) return var(o.ref);
    const std::string key = o.ref + (rowSpace ? "#row" : "");
    auto it = loads_.find(key);
    if (it != loads_.end()) return it->second.arg;
    KernelOperand k{o.ref, hostView, "x" + std::to_string(loads_.size()), rowSpace};
    order_.push_back(key);
    loads_[key] = k;
    return k.arg;
  }
  std::vector<KernelOperand> operands() const {
    std::vector<KernelOperand> out;
    for (const auto& key : order_) out.push_back(loads_.at(key));
    return out;
  }

 private:
  std::set<std::string> inside_;
  std::map<std::string, KernelOperand> loads_;
  std::vector<std::string> order_;
};

std::string nodeList(const OpGraph& g, const FusionGroup& group) {
  std::vector<std::string> ops;
  for (int i : group.nodes) ops.push_back(g.nodes[i].op);
  return join(ops, " -> ");
}

std::string allocate(const OpGraph& g, const std::string& name, const HostContext& host) {
  const std::string dtype = dtypeOf(g, name);
  return std::string(kHost) + var(name) + " = torch.empty(" +
         host.shape(shapeOfValue(g, name), altShapeOfValue(g, name)) + ", device=" + host.device +
         ", dtype=torch." + dtype + ")\n";
}

/// The Python expression of `name` broadcast to `target` (a host tuple expression).
std::string broadcastTo(const OpGraph& g, const std::string& name, const HostContext& host,
                        const std::string& target) {
  (void)g;
  return host.value(name) + ".expand(" + target + ")";
}

// ---------------------------------------------------------------------------------------------
// Pointwise: a flat index space over the output shape.

std::optional<LoweredGroup> lowerPointwise(const OpGraph& g, const FusionGroup& group, int index,
                                           const Tiling& t, const HostContext& host,
                                           std::string& why) {
  GroupState st(g, group);
  const int rank = static_cast<int>(group.domain.size());
  const std::string dom = "_dom" + std::to_string(index);
  std::ostringstream body;
  for (int ni : group.nodes) {
    const OpNode& n = g.nodes[ni];
    std::vector<std::string> args;
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      std::string view;
      if (n.inputs[k].isRef() && !st.inside(n.inputs[k].ref)) {
        view = broadcastTo(g, n.inputs[k].ref, host, dom);
        // batch_norm's statistics and affine parameters follow the channel dimension (1).
        if (n.op == "batch_norm" && k > 0) {
          view = host.value(n.inputs[k].ref) + ".reshape(-1" +
                 std::string(rank > 2 ? std::string(", 1") : "") +
                 (rank > 3 ? std::string(", 1") : "") + ").expand(" + dom + ")";
        }
      }
      args.push_back(st.operand(n.inputs[k], false, view));
    }
    auto e = pointwiseExpr(n, args, why);
    if (!e) return std::nullopt;
    body << kBody << var(n.name) << " = " << *e << "  # " << n.op << " (line " << n.line << ")\n";
  }
  const auto ops = st.operands();
  const std::string name = "k" + std::to_string(index) + "_pointwise";
  std::vector<std::string> params, launchArgs;
  for (const auto& o : ops) {
    params.push_back("p_" + o.arg);
    launchArgs.push_back("_" + o.arg);
  }
  for (const auto& s : group.stores) {
    params.push_back("out_" + s);
    launchArgs.push_back(var(s));
  }
  params.push_back("n_elements");
  launchArgs.push_back("_n");
  for (int d = 1; d < rank; ++d) {
    params.push_back("size" + std::to_string(d));
    launchArgs.push_back(dom + "[" + std::to_string(d) + "]");
  }
  for (const auto& o : ops) {
    for (int d = 0; d < rank; ++d) params.push_back(o.arg + "_s" + std::to_string(d));
    launchArgs.push_back("*_" + o.arg + ".stride()");
  }
  params.push_back("BLOCK: tl.constexpr");

  std::ostringstream k;
  k << "@triton.jit\ndef " << name << "(" << join(params, ", ") << "):\n";
  k << kBody << "# " << nodeList(g, group) << ", one element per lane; outputs are contiguous.\n";
  k << kBody << "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n";
  k << kBody << "mask = offs < n_elements\n";
  if (!ops.empty()) {
    k << kBody << "# the element's coordinates in the output shape, to address broadcast and\n"
      << kBody << "# strided operands\n";
    k << kBody << "rem = offs\n";
    for (int d = rank - 1; d >= 1; --d) {
      k << kBody << "c" << d << " = rem % size" << d << "\n";
      k << kBody << "rem = rem // size" << d << "\n";
    }
    k << kBody << "c0 = rem\n";
  }
  for (const auto& o : ops) {
    std::vector<std::string> terms;
    for (int d = 0; d < rank; ++d)
      terms.push_back("c" + std::to_string(d) + " * " + o.arg + "_s" + std::to_string(d));
    k << kBody << o.arg << " = tl.load(p_" << o.arg << " + " << join(terms, " + ")
      << ", mask=mask, other=0.0)" << widen(dtypeOf(g, o.value)) << "\n";
  }
  k << body.str();
  for (const auto& s : group.stores) {
    k << kBody << "tl.store(out_" << s << " + offs, " << var(s) << ", mask=mask)\n";
  }

  std::ostringstream h;
  h << kHost << "# group " << index << ": " << nodeList(g, group) << " (pointwise, fused)\n";
  h << kHost << dom << " = " << host.shape(group.domain, g.nodes[group.nodes.back()].altShape)
    << "\n";
  for (const auto& s : group.stores) h << allocate(g, s, host);
  h << kHost << "_n = _prod(" << dom << ")\n";
  for (const auto& o : ops) h << kHost << "_" << o.arg << " = " << o.hostView << "\n";
  h << kHost << name << "[(triton.cdiv(_n, " << t.block << "),)](" << join(launchArgs, ", ")
    << ", BLOCK=" << t.block << ", num_warps=" << t.warps << ")\n";
  return LoweredGroup{k.str(), h.str(),
                      "group " + std::to_string(index) + " pointwise [" + nodeList(g, group) +
                          "]: one fused elementwise kernel, BLOCK=" + std::to_string(t.block) +
                          ", warps=" + std::to_string(t.warps)};
}

// ---------------------------------------------------------------------------------------------
// Row programs: rows are the domain's positions outside the reduced dimension; each program
// holds ROWS whole rows ([ROWS, BLOCK_R]) and reduces along axis 1.

struct RowSpace {
  std::map<std::string, bool> row;  // value -> computed per row ([ROWS, 1])
};

std::optional<LoweredGroup> lowerRow(const OpGraph& g, const FusionGroup& group, int index,
                                     const Tiling& t, const HostContext& host, std::string& why) {
  GroupState st(g, group);
  const int rank = static_cast<int>(group.domain.size());
  const int d = group.reduceDim;
  const std::string dom = "_dom" + std::to_string(index);
  std::vector<int> kept;
  for (int i = 0; i < rank; ++i) {
    if (i != d) kept.push_back(i);
  }
  // The domain's shape on the alternative batch: the first node whose shape is the domain.
  std::optional<Shape> domAlt;
  for (int ni : group.nodes) {
    const OpNode& n = g.nodes[ni];
    if (n.shape == group.domain) domAlt = n.altShape;
    if (!n.inputs.empty() && n.inputs[0].isRef() &&
        shapeOfValue(g, n.inputs[0].ref) == group.domain && !domAlt) {
      domAlt = altShapeOfValue(g, n.inputs[0].ref);
    }
  }

  RowSpace space;
  auto isRow = [&](const std::string& name) {
    auto it = space.row.find(name);
    return it != space.row.end() && it->second;
  };
  auto red = [](const std::string& fn, const std::string& x, const std::string& fill) {
    return "tl." + fn + "(tl.where(fmask, " + x + ", " + fill + "), axis=1)[:, None]";
  };
  std::ostringstream body;
  for (int ni : group.nodes) {
    const OpNode& n = g.nodes[ni];
    const bool rowNode = n.shape != group.domain;
    const OpKind kind = opKind(n);
    const std::string v = var(n.name);
    // Operands: row-space ones are expanded to the node's shape (then given back the reduced
    // dim when the node dropped it) before the domain; full-space ones straight to the domain.
    std::vector<std::string> args;
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const Operand& in = n.inputs[k];
      const bool inRow = kind == OpKind::Pointwise ? rowNode : (n.op == "cross_entropy" && k == 1);
      std::string view;
      if (in.isRef() && !st.inside(in.ref)) {
        if (inRow) {
          const bool dropped = n.shape.size() < group.domain.size();
          view = host.value(in.ref) + ".expand(" + host.shape(n.shape, n.altShape) + ")" +
                 (dropped ? ".unsqueeze(" + std::to_string(d) + ")" : "") + ".expand(" + dom + ")";
        } else {
          view = broadcastTo(g, in.ref, host, dom);
        }
      }
      args.push_back(st.operand(in, inRow, view));
      if (in.isRef() && st.inside(in.ref) && isRow(in.ref) && kind != OpKind::Pointwise &&
          !(n.op == "cross_entropy" && k == 1)) {
        why = n.op + " of a value that is already reduced";
        return std::nullopt;
      }
    }
    space.row[n.name] = rowNode;
    const std::string where = "  # " + n.op + " (line " + std::to_string(n.line) + ")\n";
    if (kind == OpKind::Pointwise) {
      auto e = pointwiseExpr(n, args, why);
      if (!e) return std::nullopt;
      body << kBody << v << " = " << *e << where;
      continue;
    }
    const std::string& x = args.at(0);
    const std::string& op = n.op;
    const json epsAttr = n.attrs.value("eps", json(1e-5));
    const double eps = epsAttr.is_number() ? epsAttr.get<double>() : 1e-5;
    if (op == "sum") {
      body << kBody << v << " = " << red("sum", x, "0.0") << where;
    } else if (op == "mean") {
      body << kBody << v << " = " << red("sum", x, "0.0") << " / R" << where;
    } else if (op == "amax" || op == "max") {
      body << kBody << v << " = " << red("max", x, "float('-inf')") << where;
    } else if (op == "amin" || op == "min") {
      body << kBody << v << " = " << red("min", x, "float('inf')") << where;
    } else if (op == "argmax" || op == "argmin") {
      const bool mx = op == "argmax";
      body << kBody << v << " = "
           << red(mx ? "argmax" : "argmin", x, mx ? "float('-inf')" : "float('inf')") << where;
    } else if (op == "var") {
      const bool unbiased = n.attrs.value("unbiased", json(true)) == json(true);
      body << kBody << v << "_c = tl.where(fmask, " << x << " - " << red("sum", x, "0.0")
           << " / R, 0.0)\n";
      body << kBody << v << " = tl.sum(" << v << "_c * " << v << "_c, axis=1)[:, None] / "
           << (unbiased ? "(R - 1)" : "R") << where;
    } else if (op == "logsumexp" || op == "softmax" || op == "log_softmax" ||
               op == "cross_entropy") {
      body << kBody << v << "_max = " << red("max", x, "float('-inf')") << "\n";
      body << kBody << v << "_exp = tl.exp(" << x << " - " << v << "_max)\n";
      body << kBody << v << "_sum = " << red("sum", v + "_exp", "0.0") << "\n";
      if (op == "logsumexp") {
        body << kBody << v << " = " << v << "_max + tl.log(" << v << "_sum)" << where;
      } else if (op == "softmax") {
        body << kBody << v << " = " << v << "_exp / " << v << "_sum" << where;
      } else if (op == "log_softmax") {
        body << kBody << v << " = " << x << " - " << v << "_max - tl.log(" << v << "_sum)" << where;
      } else {
        // -log p[target]: the target's logit picked out of the row by its class index.
        body << kBody << v << "_pick = "
             << red("sum", "tl.where(cols == " + args.at(1) + ", " + x + ", 0.0)", "0.0") << "\n";
        body << kBody << v << " = " << v << "_max + tl.log(" << v << "_sum) - " << v << "_pick"
             << where;
      }
    } else if (op == "layer_norm" || op == "batch_norm") {
      // layer_norm: inputs (x, weight, bias); batch_norm in training: (x, mean, var, w, b).
      const std::string w = op == "layer_norm" ? args.at(1) : args.at(3);
      const std::string b = op == "layer_norm" ? args.at(2) : args.at(4);
      body << kBody << v << "_mean = " << red("sum", x, "0.0") << " / R\n";
      body << kBody << v << "_c = tl.where(fmask, " << x << " - " << v << "_mean, 0.0)\n";
      body << kBody << v << "_var = tl.sum(" << v << "_c * " << v << "_c, axis=1)[:, None] / R\n";
      std::string e = v + "_c * tl.rsqrt(" + v + "_var + " + floatLiteral(eps) + ")";
      if (w != "None") e = "(" + e + ") * " + w;
      if (b != "None") e = "(" + e + ") + " + b;
      body << kBody << v << " = " << e << where;
    } else if (op == "cumsum") {
      // In fp64: a scan adds in another order than torch's running sum, and over thousands of
      // elements fp32 rounding alone would leave the 1e-4 tolerance.
      body << kBody << v << " = tl.cumsum(tl.where(fmask, " << x
           << ", 0.0).to(tl.float64), axis=1).to(tl.float32)" << where;
    } else if (op == "cosine_similarity") {
      const std::string& y = args.at(1);
      const json cepsAttr = n.attrs.value("eps", json(1e-8));
      const double ceps = cepsAttr.is_number() ? cepsAttr.get<double>() : 1e-8;
      body << kBody << v << "_dot = " << red("sum", x + " * " + y, "0.0") << "\n";
      body << kBody << v << "_xx = " << red("sum", x + " * " + x, "0.0") << "\n";
      body << kBody << v << "_yy = " << red("sum", y + " * " + y, "0.0") << "\n";
      body << kBody << v << " = " << v << "_dot / tl.sqrt(tl.maximum(" << v << "_xx * " << v
           << "_yy, " << floatLiteral(ceps * ceps) << "))" << where;
    } else {
      why = "no row lowering for " + op;
      return std::nullopt;
    }
  }

  const auto ops = st.operands();
  const std::string name = "k" + std::to_string(index) + "_row";
  std::vector<std::string> params, launchArgs;
  auto strideArgs = [&](const std::string& prefix) {
    for (int i = 0; i < rank; ++i) params.push_back(prefix + "_s" + std::to_string(i));
  };
  for (const auto& o : ops) {
    params.push_back("p_" + o.arg);
    strideArgs(o.arg);
    launchArgs.push_back("_" + o.arg);
    launchArgs.push_back("*_" + o.arg + ".stride()");
  }
  for (const auto& s : group.stores) {
    params.push_back("out_" + s);
    strideArgs("out_" + s);
    launchArgs.push_back(var(s));
    const bool dropped = shapeOfValue(g, s).size() < group.domain.size();
    launchArgs.push_back("*" + var(s) + (dropped ? ".unsqueeze(" + std::to_string(d) + ")" : "") +
                         ".stride()");
  }
  params.push_back("n_rows");
  params.push_back("R");
  launchArgs.push_back("_rows");
  launchArgs.push_back(dom + "[" + std::to_string(d) + "]");
  for (std::size_t i = 1; i < kept.size(); ++i) {
    params.push_back("size" + std::to_string(kept[i]));
    launchArgs.push_back(dom + "[" + std::to_string(kept[i]) + "]");
  }
  params.push_back("ROWS: tl.constexpr");
  params.push_back("BLOCK_R: tl.constexpr");

  auto address = [&](const std::string& p, bool rowOnly, const std::string& pointer) {
    std::vector<std::string> terms = {pointer};
    for (int i : kept)
      terms.push_back("c" + std::to_string(i) + " * " + p + "_s" + std::to_string(i));
    if (!rowOnly) terms.push_back("cols * " + p + "_s" + std::to_string(d));
    return join(terms, " + ");
  };
  std::ostringstream k;
  k << "@triton.jit\ndef " << name << "(" << join(params, ", ") << "):\n";
  k << kBody << "# " << nodeList(g, group) << " over dim " << d
    << ": each program holds ROWS whole rows of R elements.\n";
  k << kBody << "rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]\n";
  k << kBody << "cols = tl.arange(0, BLOCK_R)[None, :]\n";
  k << kBody << "rmask = rows < n_rows\n";
  k << kBody << "fmask = rmask & (cols < R)\n";
  k << kBody << "# the row's coordinates in the dimensions that are kept\n";
  k << kBody << "rem = rows\n";
  for (std::size_t i = kept.size(); i-- > 1;) {
    k << kBody << "c" << kept[i] << " = rem % size" << kept[i] << "\n";
    k << kBody << "rem = rem // size" << kept[i] << "\n";
  }
  if (!kept.empty()) k << kBody << "c" << kept[0] << " = rem\n";
  for (const auto& o : ops) {
    const std::string dtype = dtypeOf(g, o.value);
    const std::string other = isFloat(dtype) ? "0.0" : "0";
    k << kBody << o.arg << " = tl.load(" << address(o.arg, o.rowSpace, "p_" + o.arg)
      << ", mask=" << (o.rowSpace ? "rmask" : "fmask") << ", other=" << other << ")" << widen(dtype)
      << "\n";
  }
  k << body.str();
  for (const auto& s : group.stores) {
    const bool rowOnly = isRow(s);
    k << kBody << "tl.store(" << address("out_" + s, rowOnly, "out_" + s) << ", " << var(s)
      << ", mask=" << (rowOnly ? "rmask" : "fmask") << ")\n";
  }

  const int rowsCap = 16384;
  std::ostringstream h;
  h << kHost << "# group " << index << ": " << nodeList(g, group) << " (row program over dim " << d
    << ")\n";
  h << kHost << dom << " = " << host.shape(group.domain, domAlt) << "\n";
  for (const auto& s : group.stores) h << allocate(g, s, host);
  h << kHost << "_rows = _prod(" << dom << ") // " << dom << "[" << d << "]\n";
  h << kHost << "_block_r = triton.next_power_of_2(" << dom << "[" << d << "])\n";
  h << kHost << "_per = max(1, min(" << t.rows << ", " << rowsCap << " // _block_r))\n";
  for (const auto& o : ops) h << kHost << "_" << o.arg << " = " << o.hostView << "\n";
  h << kHost << name << "[(triton.cdiv(_rows, _per),)](" << join(launchArgs, ", ")
    << ", ROWS=_per, BLOCK_R=_block_r, num_warps=" << t.warps << ")\n";
  return LoweredGroup{k.str(), h.str(),
                      "group " + std::to_string(index) + " row program [" + nodeList(g, group) +
                          "] over dim " + std::to_string(d) + ": whole rows in registers, ROWS=" +
                          std::to_string(t.rows) + ", warps=" + std::to_string(t.warps)};
}

// ---------------------------------------------------------------------------------------------
// Matrix products: tl.dot over a K loop, the epilogue applied to the accumulator tile.

std::optional<LoweredGroup> lowerMatmul(const OpGraph& g, const FusionGroup& group, int index,
                                        const Tiling& t, const HostContext& host,
                                        std::string& why) {
  const OpNode& mm = g.nodes[group.nodes.front()];
  if (mm.inputs.size() < 2 || !mm.inputs[0].isRef() || !mm.inputs[1].isRef()) {
    why = mm.op + " of a constant";
    return std::nullopt;
  }
  const std::string a = mm.inputs[0].ref, b = mm.inputs[1].ref;
  const Shape as = shapeOfValue(g, a), bs = shapeOfValue(g, b);
  const bool linear = mm.op == "linear";
  if (as.size() < 2 && !linear) {
    why = mm.op + " of a vector";
    return std::nullopt;
  }
  // flat: B is one matrix, A's leading dims fold into M; batched: both are stacks of matrices.
  const bool flat = bs.size() == 2;
  const bool batched = !flat && as.size() == 3 && bs.size() == 3;
  if (!flat && !batched) {
    why = mm.op + " of shapes with ranks " + std::to_string(as.size()) + " and " +
          std::to_string(bs.size());
    return std::nullopt;
  }
  const std::string dom = "_dom" + std::to_string(index);
  const std::string out = mm.name;
  GroupState st(g, group);
  // Operands of the epilogue, broadcast to the output and seen as the kernel's 3-d index space.
  auto epilogueView = [&](const std::string& ref) {
    std::string v = host.value(ref) + ".expand(" + dom + ")";
    if (flat) v += ".reshape(-1, " + dom + "[-1])";
    return v;
  };
  std::ostringstream body;
  std::string bias = "None";
  if (linear && mm.inputs.size() > 2 && mm.inputs[2].isRef()) bias = mm.inputs[2].ref;
  body << kBody << var(out) << " = acc";
  if (bias != "None") body << " + tl.load(bias + rn * bias_s, mask=rn < N, other=0.0)[None, :]";
  body << "  # " << mm.op << " (line " << mm.line << ")\n";
  for (std::size_t i = 1; i < group.nodes.size(); ++i) {
    const OpNode& n = g.nodes[group.nodes[i]];
    std::vector<std::string> args;
    for (const auto& in : n.inputs) {
      args.push_back(
          st.operand(in, false, in.isRef() && !st.inside(in.ref) ? epilogueView(in.ref) : ""));
    }
    auto e = pointwiseExpr(n, args, why);
    if (!e) return std::nullopt;
    body << kBody << var(n.name) << " = " << *e << "  # " << n.op << " (line " << n.line << ")\n";
  }
  const auto ops = st.operands();
  const std::string name = "k" + std::to_string(index) + "_matmul";
  std::vector<std::string> params = {"a", "b"}, launchArgs = {"_a", "_b"};
  if (bias != "None") {
    params.push_back("bias");
    launchArgs.push_back("_bias");
  }
  for (const auto& o : ops) {
    params.push_back("p_" + o.arg);
    launchArgs.push_back("_" + o.arg);
  }
  for (const auto& s : group.stores) {
    params.push_back("out_" + s);
    launchArgs.push_back("_o_" + s);
  }
  for (const char* p : {"M", "N", "K", "a_sb", "a_sm", "a_sk", "b_sb", "b_sk", "b_sn"})
    params.push_back(p);
  launchArgs.insert(launchArgs.end(), {"_M", "_N", "_K", "*_strides3(_a)", "*_strides3(_b)"});
  if (bias != "None") {
    params.push_back("bias_s");
    launchArgs.push_back("_bias.stride(0)");
  }
  auto tileStrides = [&](const std::string& p, const std::string& hostName) {
    for (const char* s : {"_sb", "_sm", "_sn"}) params.push_back(p + s);
    launchArgs.push_back("*_strides3(" + hostName + ")");
  };
  for (const auto& o : ops) tileStrides(o.arg, "_" + o.arg);
  for (const auto& s : group.stores) tileStrides("out_" + s, "_o_" + s);
  for (const char* p :
       {"BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr", "BLOCK_K: tl.constexpr"}) {
    params.push_back(p);
  }

  auto tile = [](const std::string& p, const std::string& pointer) {
    return pointer + " + pid_b * " + p + "_sb + rm[:, None] * " + p + "_sm + rn[None, :] * " + p +
           "_sn";
  };
  std::ostringstream k;
  k << "@triton.jit\ndef " << name << "(" << join(params, ", ") << "):\n";
  k << kBody << "# " << nodeList(g, group)
    << ": a BLOCK_M x BLOCK_N tile of the product per program, accumulated in fp32 over K,\n"
    << kBody << "# then the epilogue on the tile before the single store.\n";
  k << kBody << "pid_m = tl.program_id(0)\n"
    << kBody << "pid_n = tl.program_id(1)\n"
    << kBody << "pid_b = tl.program_id(2)\n";
  k << kBody << "rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n";
  k << kBody << "rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n";
  k << kBody << "rk = tl.arange(0, BLOCK_K)\n";
  k << kBody << "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n";
  k << kBody << "for k0 in range(0, K, BLOCK_K):\n";
  k << kBody << kBody << "kk = k0 + rk\n";
  k << kBody << kBody
    << "a_tile = tl.load(a + pid_b * a_sb + rm[:, None] * a_sm + kk[None, :] * a_sk,\n"
    << kBody << kBody
    << "                 mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)\n";
  k << kBody << kBody
    << "b_tile = tl.load(b + pid_b * b_sb + kk[:, None] * b_sk + rn[None, :] * b_sn,\n"
    << kBody << kBody
    << "                 mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)\n";
  k << kBody << kBody << "# ieee: full fp32 products (TF32 would miss a 1e-4 tolerance on GPUs)\n";
  k << kBody << kBody << "acc += tl.dot(a_tile, b_tile, input_precision=\"ieee\")\n";
  k << kBody << "mask = (rm[:, None] < M) & (rn[None, :] < N)\n";
  for (const auto& o : ops) {
    k << kBody << o.arg << " = tl.load(" << tile(o.arg, "p_" + o.arg) << ", mask=mask, other=0.0)"
      << widen(dtypeOf(g, o.value)) << "\n";
  }
  k << body.str();
  for (const auto& s : group.stores) {
    k << kBody << "tl.store(" << tile("out_" + s, "out_" + s) << ", " << var(s) << ", mask=mask)\n";
  }

  std::ostringstream h;
  h << kHost << "# group " << index << ": " << nodeList(g, group) << " (tl.dot, fused epilogue)\n";
  h << kHost << dom << " = " << host.shape(mm.shape, mm.altShape) << "\n";
  const std::string av = host.value(a), bv = host.value(b);
  if (flat) {
    h << kHost << "_a = " << av << ".reshape(-1, " << av << ".shape[-1])\n";
    h << kHost << "_b = " << bv << (linear ? ".t()" : "") << "\n";
  } else {
    h << kHost << "_a = " << av << "\n" << kHost << "_b = " << bv << "\n";
  }
  if (bias != "None") h << kHost << "_bias = " << host.value(bias) << "\n";
  h << kHost << "_M, _K, _N = _a.shape[-2], _a.shape[-1], _b.shape[-1]\n";
  for (const auto& s : group.stores) {
    h << allocate(g, s, host);
    h << kHost << "_o_" << s << " = " << var(s) << (flat ? ".view(-1, _N)" : "") << "\n";
  }
  for (const auto& o : ops) h << kHost << "_" << o.arg << " = " << o.hostView << "\n";
  h << kHost << "_grid = (triton.cdiv(_M, " << t.blockM << "), triton.cdiv(_N, " << t.blockN
    << "), " << (batched ? "_a.shape[0]" : "1") << ")\n";
  h << kHost << name << "[_grid](" << join(launchArgs, ", ") << ", BLOCK_M=" << t.blockM
    << ", BLOCK_N=" << t.blockN << ", BLOCK_K=" << t.blockK << ", num_warps=" << t.warps << ")\n";
  return LoweredGroup{
      k.str(), h.str(),
      "group " + std::to_string(index) + " matmul [" + nodeList(g, group) +
          "]: tl.dot with a K loop and the epilogue fused, BLOCK_M=" + std::to_string(t.blockM) +
          " BLOCK_N=" + std::to_string(t.blockN) + " BLOCK_K=" + std::to_string(t.blockK) +
          ", warps=" + std::to_string(t.warps)};
}

// ---------------------------------------------------------------------------------------------
// Convolutions (1-D and 2-D, groups, stride, padding, dilation): direct loops, one output
// element per lane, the epilogue applied before the store.

std::vector<int> intList(const json& v, std::size_t n, int fallback) {
  std::vector<int> out;
  if (v.is_number_integer()) out.assign(n, v.get<int>());
  if (v.is_array()) {
    for (const auto& x : v) out.push_back(x.is_number_integer() ? x.get<int>() : fallback);
  }
  if (out.size() == 1 && n > 1) out.assign(n, out[0]);
  if (out.size() != n) out.assign(n, fallback);
  return out;
}

std::optional<LoweredGroup> lowerConv(const OpGraph& g, const FusionGroup& group, int index,
                                      const Tiling& t, const HostContext& host, std::string& why) {
  const OpNode& cv = g.nodes[group.nodes.front()];
  // Pooling is the same loop nest without weights: a max or a mean over the window per channel.
  const bool pool = cv.op.find("pool") != std::string::npos;
  const bool maxPool = cv.op.rfind("max_pool", 0) == 0;
  if (cv.inputs.empty() || !cv.inputs[0].isRef() ||
      (!pool && (cv.inputs.size() < 2 || !cv.inputs[1].isRef()))) {
    why = cv.op + " without an input or a weight";
    return std::nullopt;
  }
  const int sd = cv.op == "conv1d" || cv.op == "max_pool1d" ? 1 : 2;  // spatial dims
  const int rank = sd + 2;
  if (static_cast<int>(cv.shape.size()) != rank ||
      static_cast<int>(shapeOfValue(g, cv.inputs[0].ref).size()) != rank) {
    why = cv.op + " of an unbatched input";
    return std::nullopt;
  }
  if (cv.attrs.value("padding", json(0)).is_string()) {
    why = cv.op + " with padding=" + cv.attrs["padding"].dump();
    return std::nullopt;
  }
  std::vector<int> window, stride, pad, dil;
  if (pool && cv.op == "adaptive_avg_pool2d") {
    // Only the case where every window is the same: the input a multiple of the output.
    const Shape in = shapeOfValue(g, cv.inputs[0].ref);
    for (int i = 0; i < sd; ++i) {
      const auto o = cv.shape[2 + i], n = in[2 + i];
      if (o <= 0 || n % o != 0) {
        why = "adaptive_avg_pool2d from " + std::to_string(n) + " to " + std::to_string(o);
        return std::nullopt;
      }
      window.push_back(static_cast<int>(n / o));
    }
    stride = window;
    pad.assign(sd, 0);
    dil.assign(sd, 1);
  } else if (pool) {
    if (cv.attrs.value("ceil_mode", json(false)) == json(true)) {
      why = cv.op + " with ceil_mode";
      return std::nullopt;
    }
    window = intList(cv.attrs.value("kernel_size", json(1)), sd, 1);
    const json st = cv.attrs.value("stride", json());
    stride = st.is_null() || (st.is_array() && st.empty()) ? window : intList(st, sd, 1);
    pad = intList(cv.attrs.value("padding", json(0)), sd, 0);
    dil = intList(cv.attrs.value("dilation", json(1)), sd, 1);
  } else {
    stride = intList(cv.attrs.value("stride", json(1)), sd, 1);
    pad = intList(cv.attrs.value("padding", json(0)), sd, 0);
    dil = intList(cv.attrs.value("dilation", json(1)), sd, 1);
    const Shape ws = shapeOfValue(g, cv.inputs[1].ref);
    for (int i = 0; i < sd; ++i) window.push_back(static_cast<int>(ws.at(2 + i)));
  }
  int windowSize = 1;
  for (int w : window) windowSize *= w;
  const std::string bias = !pool && cv.inputs.size() > 2 && cv.inputs[2].isRef()
                               ? cv.inputs[2].ref
                               : std::string("None");
  const std::string dom = "_dom" + std::to_string(index);

  GroupState st(g, group);
  std::ostringstream body;
  body << kBody << var(cv.name) << " = acc";
  if (bias != "None") body << " + tl.load(p_bias + co * bias_s, mask=mask, other=0.0)";
  // avg_pool2d counts the padding in the window (count_include_pad=True, torch's default).
  if (pool && !maxPool) body << " / " << windowSize << ".0";
  body << "  # " << cv.op << " (line " << cv.line << ")\n";
  for (std::size_t i = 1; i < group.nodes.size(); ++i) {
    const OpNode& n = g.nodes[group.nodes[i]];
    std::vector<std::string> args;
    for (const auto& in : n.inputs) {
      args.push_back(st.operand(
          in, false, in.isRef() && !st.inside(in.ref) ? broadcastTo(g, in.ref, host, dom) : ""));
    }
    auto e = pointwiseExpr(n, args, why);
    if (!e) return std::nullopt;
    body << kBody << var(n.name) << " = " << *e << "  # " << n.op << " (line " << n.line << ")\n";
  }
  const auto ops = st.operands();
  const std::string name = "k" + std::to_string(index) + "_conv";
  const char* sp[2] = {"h", "w"};
  auto spName = [&](int i) { return std::string(sd == 1 ? "w" : sp[i]); };
  std::vector<std::string> params = {"p_x", "p_w"}, launchArgs = {"_x", pool ? "_x" : "_w"};
  if (bias != "None") {
    params.push_back("p_bias");
    launchArgs.push_back("_bias");
  }
  for (const auto& o : ops) {
    params.push_back("p_" + o.arg);
    launchArgs.push_back("_" + o.arg);
  }
  for (const auto& s : group.stores) {
    params.push_back("out_" + s);
    launchArgs.push_back(var(s));
  }
  params.insert(params.end(), {"n_elements", "C_OUT", "CIN_G", "COUT_G"});
  if (pool) {
    launchArgs.insert(launchArgs.end(), {"_n", dom + "[1]", "1", "1"});
  } else {
    launchArgs.insert(launchArgs.end(),
                      {"_n", dom + "[1]", "_w.shape[1]", "_w.shape[0] // _groups"});
  }
  for (int i = 0; i < sd; ++i) {
    params.push_back("O" + spName(i));
    params.push_back("I" + spName(i));
    launchArgs.push_back(dom + "[" + std::to_string(2 + i) + "]");
    launchArgs.push_back("_x.shape[" + std::to_string(2 + i) + "]");
  }
  for (int i = 0; i < rank; ++i) params.push_back("x_s" + std::to_string(i));
  for (int i = 0; i < rank; ++i) params.push_back("w_s" + std::to_string(i));
  launchArgs.push_back("*_x.stride()");
  launchArgs.push_back(pool ? "*_x.stride()" : "*_w.stride()");
  if (bias != "None") {
    params.push_back("bias_s");
    launchArgs.push_back("_bias.stride(0)");
  }
  for (const auto& o : ops) {
    for (int d = 0; d < rank; ++d) params.push_back(o.arg + "_s" + std::to_string(d));
    launchArgs.push_back("*_" + o.arg + ".stride()");
  }
  for (int i = 0; i < sd; ++i) {
    for (const char* p : {"K", "S", "P", "D"})
      params.push_back(std::string(p) + spName(i) + ": tl.constexpr");
  }
  params.push_back("BLOCK: tl.constexpr");

  std::ostringstream k;
  k << "@triton.jit\ndef " << name << "(" << join(params, ", ") << "):\n";
  k << kBody << "# " << nodeList(g, group)
    << ": direct convolution, one output element per lane, summing input channels of its group\n"
    << kBody << "# times the kernel window (out-of-range taps are the zero padding).\n";
  k << kBody << "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n";
  k << kBody << "mask = offs < n_elements\n";
  k << kBody << "rem = offs\n";
  for (int i = sd - 1; i >= 0; --i) {
    k << kBody << "o" << spName(i) << " = rem % O" << spName(i) << "\n";
    k << kBody << "rem = rem // O" << spName(i) << "\n";
  }
  k << kBody << "co = rem % C_OUT\n" << kBody << "bi = rem // C_OUT\n";
  std::string indent = std::string(kBody);
  std::string xAddr = "p_x + bi * x_s0 + co * x_s1";
  if (pool) {
    k << kBody << "acc = tl.full((BLOCK,), " << (maxPool ? "float('-inf')" : "0.0")
      << ", dtype=tl.float32)\n";
  } else {
    k << kBody << "first = (co // COUT_G) * CIN_G  # the group's first input channel\n";
    k << kBody << "acc = tl.zeros((BLOCK,), dtype=tl.float32)\n";
    k << kBody << "for ci in range(0, CIN_G):\n";
    indent += kBody;
    xAddr = "p_x + bi * x_s0 + (first + ci) * x_s1";
  }
  std::string wAddr = "p_w + co * w_s0 + ci * w_s1";
  std::string ok = "mask";
  for (int i = 0; i < sd; ++i) {
    const std::string s = spName(i);
    k << indent << "for k" << s << " in tl.static_range(K" << s << "):\n";
    indent += kBody;
    k << indent << "i" << s << " = o" << s << " * S" << s << " - P" << s << " + k" << s << " * D"
      << s << "\n";
    xAddr += " + i" + s + " * x_s" + std::to_string(2 + i);
    wAddr += " + k" + s + " * w_s" + std::to_string(2 + i);
    ok += " & (i" + s + " >= 0) & (i" + s + " < I" + s + ")";
  }
  if (maxPool) {
    k << indent << "xv = tl.load(" << xAddr << ", mask=" << ok << ", other=float('-inf'))\n";
    k << indent << "acc = tl.maximum(acc, xv)\n";
  } else if (pool) {
    k << indent << "acc += tl.load(" << xAddr << ", mask=" << ok << ", other=0.0)\n";
  } else {
    k << indent << "xv = tl.load(" << xAddr << ", mask=" << ok << ", other=0.0)\n";
    k << indent << "wv = tl.load(" << wAddr << ", mask=mask, other=0.0)\n";
    k << indent << "acc += xv * wv\n";
  }
  if (!ops.empty()) {
    // Epilogue operands are addressed by the output coordinates (n, c, spatial...).
    std::vector<std::string> coords = {"bi", "co"};
    for (int i = 0; i < sd; ++i) coords.push_back("o" + spName(i));
    for (const auto& o : ops) {
      std::vector<std::string> terms;
      for (int d = 0; d < rank; ++d)
        terms.push_back(coords[d] + " * " + o.arg + "_s" + std::to_string(d));
      k << kBody << o.arg << " = tl.load(p_" << o.arg << " + " << join(terms, " + ")
        << ", mask=mask, other=0.0)" << widen(dtypeOf(g, o.value)) << "\n";
    }
  }
  k << body.str();
  for (const auto& s : group.stores) {
    k << kBody << "tl.store(out_" << s << " + offs, " << var(s) << ", mask=mask)\n";
  }

  std::ostringstream h;
  h << kHost << "# group " << index << ": " << nodeList(g, group)
    << (pool ? " (window loop)\n" : " (direct convolution)\n");
  h << kHost << dom << " = " << host.shape(cv.shape, cv.altShape) << "\n";
  h << kHost << "_x = " << host.value(cv.inputs[0].ref) << "\n";
  if (!pool) h << kHost << "_w = " << host.value(cv.inputs[1].ref) << "\n";
  if (bias != "None") h << kHost << "_bias = " << host.value(bias) << "\n";
  if (!pool) h << kHost << "_groups = " << cv.attrs.value("groups", json(1)).dump() << "\n";
  for (const auto& s : group.stores) h << allocate(g, s, host);
  h << kHost << "_n = _prod(" << dom << ")\n";
  for (const auto& o : ops) h << kHost << "_" << o.arg << " = " << o.hostView << "\n";
  std::vector<std::string> consts;
  for (int i = 0; i < sd; ++i) {
    const std::string s = spName(i);
    consts.push_back("K" + s + "=" + std::to_string(window[i]));
    consts.push_back("S" + s + "=" + std::to_string(stride[i]));
    consts.push_back("P" + s + "=" + std::to_string(pad[i]));
    consts.push_back("D" + s + "=" + std::to_string(dil[i]));
  }
  h << kHost << name << "[(triton.cdiv(_n, " << t.block << "),)](" << join(launchArgs, ", ") << ", "
    << join(consts, ", ") << ", BLOCK=" << t.block << ", num_warps=" << t.warps << ")\n";
  return LoweredGroup{k.str(), h.str(),
                      "group " + std::to_string(index) + " conv [" + nodeList(g, group) +
                          "]: direct loops over input channels and the window, epilogue fused, "
                          "BLOCK=" +
                          std::to_string(t.block) + ", warps=" + std::to_string(t.warps)};
}

// ---------------------------------------------------------------------------------------------
// Views: layout bookkeeping on the host (no data moves).

std::optional<LoweredGroup> lowerView(const OpGraph& g, const FusionGroup& group, int index,
                                      const HostContext& host, std::string& why) {
  const OpNode& n = g.nodes[group.nodes.front()];
  if (n.inputs.empty() || !n.inputs[0].isRef()) {
    why = n.op + " of a constant";
    return std::nullopt;
  }
  const std::string x = host.value(n.inputs[0].ref);
  const json& at = n.attrs;
  std::string e;
  if (n.op == "transpose") {
    e = x + ".transpose(" + at.value("dim0", json(0)).dump() + ", " +
        at.value("dim1", json(1)).dump() + ")";
  } else if (n.op == "t") {
    e = x + ".t()";
  } else if (n.op == "permute") {
    const json& dims = at.value("dims", json());
    if (!dims.is_array()) {
      why = "permute with computed dims";
      return std::nullopt;
    }
    std::vector<std::string> ds;
    for (const auto& dd : dims) ds.push_back(dd.dump());
    e = x + ".permute(" + join(ds, ", ") + ")";
  } else if (n.op == "contiguous") {
    e = x;  // kernels address operands through their strides
  } else {  // reshape, flatten, unsqueeze, squeeze: the traced result's shape
    e = x + ".reshape(" + host.shape(n.shape, n.altShape) + ")";
  }
  return LoweredGroup{"",
                      std::string(kHost) + var(n.name) + " = " + e + "  # " + n.op + " (line " +
                          std::to_string(n.line) + ")\n",
                      "group " + std::to_string(index) + " view [" + n.op + "]: on the host"};
}

}  // namespace

std::optional<LoweredGroup> lowerGroup(const OpGraph& graph, const FusionGroup& group, int index,
                                       const Tiling& tiling, const HostContext& host,
                                       std::string& why) {
  switch (group.kind) {
    case GroupKind::View:
      return lowerView(graph, group, index, host, why);
    case GroupKind::Pointwise:
      return lowerPointwise(graph, group, index, tiling, host, why);
    case GroupKind::Row:
      return lowerRow(graph, group, index, tiling, host, why);
    case GroupKind::Matmul:
      return lowerMatmul(graph, group, index, tiling, host, why);
    case GroupKind::Conv:
      return lowerConv(graph, group, index, tiling, host, why);
  }
  why = "unknown group kind";
  return std::nullopt;
}

}  // namespace crucible::synth
