// Pointwise groups: a flat index space over the output shape, one element per lane.
#include <sstream>

#include "core/kernel_synth/lowering_support.h"
#include "core/kernel_synth/pointwise_expr.h"

namespace crucible::kernel_synth {

namespace {

/// A concatenation's value at the element: each piece is loaded where it lies (its load masked
/// to its range along the dim), and the element takes the one whose range holds it.
std::optional<std::string> concatenation(const OpGraph& g, const OpNode& n, GroupState& st,
                                         const HostContext& host, std::string& why) {
  const int rank = static_cast<int>(n.shape.size());
  int dim = n.attrs.value("dim", 0);
  if (dim < 0) dim += rank;
  std::int64_t start = 0;
  std::vector<std::pair<std::int64_t, std::string>> pieces;  // (stop, kernel variable)
  for (const auto& in : n.inputs) {
    const Shape s = in.isRef() ? shapeOfValue(g, in.ref) : Shape{};
    if (static_cast<int>(s.size()) != rank || dim < 0 || dim >= rank || st.inside(in.ref)) {
      why = "cat of a piece that is not a tensor of the output's rank (line " +
            std::to_string(n.line) + ")";
      return std::nullopt;
    }
    if (s[dim] == 0) continue;  // torch.cat skips empty pieces
    const std::string x =
        st.operandAt(in.ref, host.value(in.ref), ReadAt{dim, start, start + s[dim], {}, {}});
    start += s[dim];
    pieces.emplace_back(start, x);
  }
  if (pieces.empty()) {
    why = "cat of empty pieces";
    return std::nullopt;
  }
  std::string e = pieces.back().second;
  for (auto it = pieces.rbegin() + 1; it != pieces.rend(); ++it) {
    e = "tl.where(c" + std::to_string(dim) + " < " + std::to_string(it->first) + ", " + it->second +
        ", " + e + ")";
  }
  return e;
}

/// A flip: the operand read at the mirrored coordinate along each flipped dim.
std::optional<std::string> flipped(const OpNode& n, GroupState& st, const HostContext& host,
                                   const std::string& dom, std::string& why) {
  const int rank = static_cast<int>(n.shape.size());
  const nlohmann::json& dims = n.attrs.value("dims", nlohmann::json());
  ReadAt at;
  for (const auto& d : dims.is_array() ? dims : nlohmann::json::array({dims})) {
    if (!d.is_number_integer() || rank == 0) break;
    const int dim = (d.get<int>() % rank + rank) % rank;
    if (n.altShape && (*n.altShape)[dim] != n.shape[dim]) {
      why = "flip along the batch's dimension (line " + std::to_string(n.line) + ")";
      return std::nullopt;
    }
    at.reversed.emplace_back(dim, n.shape[dim]);
  }
  if (n.inputs.empty() || !n.inputs[0].isRef() || st.inside(n.inputs[0].ref) ||
      at.reversed.empty()) {
    why = "flip of a value it cannot read (line " + std::to_string(n.line) + ")";
    return std::nullopt;
  }
  return st.operandAt(n.inputs[0].ref, broadcastTo(host, n.inputs[0].ref, dom), at);
}

/// F.pad with zeros: the input read at the element's coordinates minus each dim's leading pad,
/// zero outside it (negative pads crop). `pad` lists (before, after) pairs from the last dim.
std::optional<std::string> padded(const OpGraph& g, const OpNode& n, GroupState& st,
                                  const HostContext& host, std::string& why) {
  const int rank = static_cast<int>(n.shape.size());
  const nlohmann::json& pads = n.attrs.value("pad", nlohmann::json());
  if (n.inputs.empty() || !n.inputs[0].isRef() || st.inside(n.inputs[0].ref) || !pads.is_array() ||
      pads.size() % 2 != 0 || static_cast<int>(pads.size()) > 2 * rank) {
    why = "pad of a value it cannot read (line " + std::to_string(n.line) + ")";
    return std::nullopt;
  }
  const std::string& x = n.inputs[0].ref;
  const Shape in = shapeOfValue(g, x);
  const auto inAlt = altShapeOfValue(g, x);
  if (static_cast<int>(in.size()) != rank) {
    why = "pad that changes the rank (line " + std::to_string(n.line) + ")";
    return std::nullopt;
  }
  ReadAt at;
  for (std::size_t k = 0; k < pads.size(); k += 2) {
    if (!pads[k].is_number_integer() || !pads[k + 1].is_number_integer()) {
      why = "pad by computed amounts (line " + std::to_string(n.line) + ")";
      return std::nullopt;
    }
    const int dim = rank - 1 - static_cast<int>(k / 2);
    const auto before = pads[k].get<std::int64_t>();
    if (before == 0 && pads[k + 1].get<std::int64_t>() == 0) continue;
    if (inAlt && (*inAlt)[dim] != in[dim]) {
      why = "pad along the batch's dimension (line " + std::to_string(n.line) + ")";
      return std::nullopt;
    }
    at.shifted.emplace_back(dim, before, in[dim]);
  }
  return st.operandAt(x, host.value(x), at);
}

/// tril / triu / a diagonal matrix: the operand where the element's column minus its row keeps
/// it (the last two dims), zero elsewhere.
std::optional<std::string> triangular(const OpNode& n, GroupState& st, const HostContext& host,
                                      const std::string& dom, std::string& why) {
  const int rank = static_cast<int>(n.shape.size());
  const nlohmann::json& k = n.attrs.value("diagonal", nlohmann::json(0));
  if (rank < 2 || !k.is_number_integer() || n.inputs.empty() || !n.inputs[0].isRef()) {
    why = n.op + " of a value it cannot read (line " + std::to_string(n.line) + ")";
    return std::nullopt;
  }
  const std::string& x = n.inputs[0].ref;
  // diag_embed's vector lies along the last dim; its matrix repeats it on every row
  const std::string view = n.op == "diag_embed"
                               ? host.value(x) + ".unsqueeze(-2).expand(" + dom + ")"
                               : broadcastTo(host, x, dom);
  const std::string v = st.operand(n.inputs[0], false, st.inside(x) ? "" : view);
  const std::string offset =
      "(c" + std::to_string(rank - 1) + " - c" + std::to_string(rank - 2) + ")";
  const std::string keep = n.op == "tril" ? " <= " : n.op == "triu" ? " >= " : " == ";
  // what lies outside: zero, or (a causal mask over attention scores) another value
  const nlohmann::json& fill = n.attrs.value("fill", nlohmann::json(0.0));
  return "tl.where(" + offset + keep + std::to_string(k.get<int>()) + ", " + v + ", " +
         floatLiteral(fill.is_number() ? fill.get<double>() : 0.0) + ")";
}

}  // namespace

std::optional<LoweredGroup> lowerPointwise(const LoweringInput& in, std::string& why) {
  const auto& [g, group, index, t, host] = in;
  GroupState st(g, group);
  const int rank = static_cast<int>(group.domain.size());
  const std::string dom = "_dom" + std::to_string(index);
  std::string body;
  bool byCoordinates = false;  // ops that read by coordinates: no flat kernel
  for (int ni : group.nodes) {
    const OpNode& n = g.nodes[ni];
    if (readsByCoordinates(n.op)) {
      auto e = n.op == "cat"    ? concatenation(g, n, st, host, why)
               : n.op == "flip" ? flipped(n, st, host, dom, why)
               : n.op == "pad"  ? padded(g, n, st, host, why)
                                : triangular(n, st, host, dom, why);
      if (!e) return std::nullopt;
      body += statement(n, *e);
      byCoordinates = true;
      continue;
    }
    std::vector<std::string> args;
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      std::string view;
      if (n.inputs[k].isRef() && !st.inside(n.inputs[k].ref)) {
        // batch_norm's statistics and affine parameters follow the channel dimension (1).
        view = n.op == "batch_norm" && k > 0 ? channelView(host, n.inputs[k].ref, rank, dom)
                                             : broadcastTo(host, n.inputs[k].ref, dom);
      }
      args.push_back(st.operand(n.inputs[k], false, view));
    }
    auto e = pointwiseExpr(n, args, why);
    if (!e) return std::nullopt;
    body += statement(n, *e);
  }
  const auto ops = st.operands();
  const std::string name = "k" + std::to_string(index) + "_pointwise";
  KernelSignature sig;
  sig.addPointers(ops, group.stores, var);
  sig.add("n_elements", "_n");
  for (int d = 1; d < rank; ++d)
    sig.add("size" + std::to_string(d), dom + "[" + std::to_string(d) + "]");
  sig.addStrides(ops, rank);
  sig.constexprs({"BLOCK"});

  const auto head = [&](std::ostringstream& k, const KernelSignature& s, const std::string& n) {
    k << s.def(n);
    k << kBody << "# " << nodeList(g, group) << ", one element per lane; outputs are contiguous.\n";
    k << kBody << "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n";
    k << kBody << "mask = offs < n_elements\n";
  };
  const auto stores = [&](std::ostringstream& k) {
    for (const auto& s : group.stores) {
      k << kBody << "tl.store(out_" << s << " + offs, " << var(s) << ", mask=mask)\n";
    }
  };
  std::ostringstream k;
  // When every operand is laid out like the output (the common case: same shape, contiguous),
  // a second kernel addresses them by the flat index. Without the div/mod coordinates and the
  // strided gathers its loads are unit-stride, which CPUs vectorise and GPUs coalesce for free.
  const std::string dense = name + "_dense";
  KernelSignature denseSig;
  if (!ops.empty() && !byCoordinates) {
    denseSig.addPointers(ops, group.stores, var);
    denseSig.add("n_elements", "_n");
    denseSig.constexprs({"BLOCK"});
    head(k, denseSig, dense);
    k << kBody << "# every operand is contiguous in the output's shape: flat addressing\n";
    k << loadOperandsFlat(g, ops, "offs", "mask");
    k << body;
    stores(k);
    k << "\n\n";
  }
  head(k, sig, name);
  std::vector<std::string> coords;
  if (!ops.empty()) {
    k << kBody << "# the element's coordinates in the output shape, to address broadcast and\n"
      << kBody << "# strided operands\n";
    k << kBody << "rem = offs\n";
    for (int d = rank - 1; d >= 1; --d) {
      k << kBody << "c" << d << " = rem % size" << d << "\n";
      k << kBody << "rem = rem // size" << d << "\n";
    }
    k << kBody << "c0 = rem\n";
    for (int d = 0; d < rank; ++d) coords.push_back("c" + std::to_string(d));
  }
  k << loadOperands(g, ops, coords, "mask");
  k << body;
  stores(k);

  std::ostringstream h;
  h << kHost << "# group " << index << ": " << nodeList(g, group) << " (pointwise, fused)\n";
  h << kHost << dom << " = " << host.shape(group.domain, g.nodes[group.nodes.back()].altShape)
    << "\n";
  for (const auto& s : group.stores) h << allocate(g, s, host);
  h << kHost << "_n = _prod(" << dom << ")\n";
  h << bindOperands(ops);
  const auto launch = [&](const std::string& indent, const std::string& n,
                          const KernelSignature& s) {
    h << indent << n << "[(_cdiv(_n, " << t.block << "),)](" << join(s.args, ", ")
      << ", BLOCK=" << t.block << launchOptions(t) << ")\n";
  };
  if (ops.empty() || byCoordinates) {
    launch(kHost, name, sig);
  } else {
    std::vector<std::string> views;
    for (const auto& o : ops) views.push_back("_" + o.arg + ".is_contiguous()");
    h << kHost << "if " << join(views, " and ") << ":\n";
    launch(std::string(kHost) + "    ", dense, denseSig);
    h << kHost << "else:\n";
    launch(std::string(kHost) + "    ", name, sig);
  }
  return LoweredGroup{k.str(), h.str(),
                      "group " + std::to_string(index) + " pointwise [" + nodeList(g, group) +
                          "]: one fused elementwise kernel, BLOCK=" + std::to_string(t.block) +
                          ", warps=" + std::to_string(t.warps)};
}

}  // namespace crucible::kernel_synth
