#include "core/kernel_synth/lowering_support.h"

#include "core/kernel_synth/pointwise_expr.h"
#include "core/kernel_synth/row_ops.h"

namespace crucible::kernel_synth {

using nlohmann::json;

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

std::string widen(const std::string& dtype) {
  return dtype == "float16" || dtype == "bfloat16" ? ".to(tl.float32)" : "";
}

std::string origin(const OpNode& n) {
  return "  # " + n.op + " (line " + std::to_string(n.line) + ")\n";
}

std::string statement(const OpNode& n, const std::string& expr) {
  return std::string(kBody) + var(n.name) + " = " + expr + origin(n);
}

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

GroupState::GroupState(const OpGraph& graph, const FusionGroup& group) {
  for (int i : group.nodes) inside_.insert(graph.nodes[i].name);
}

std::string GroupState::operand(const Operand& o, bool rowSpace, const std::string& hostView) {
  if (o.isNone()) return "None";
  if (!o.isRef()) return floatLiteral(*o.number);
  if (inside(o.ref)) return var(o.ref);
  const std::string key = o.ref + (rowSpace ? "#row" : "");
  auto it = loads_.find(key);
  if (it != loads_.end()) return it->second.arg;
  KernelOperand k{o.ref, hostView, "x" + std::to_string(loads_.size()), rowSpace, {}};
  order_.push_back(key);
  loads_[key] = k;
  return k.arg;
}

std::string GroupState::operandAt(const std::string& ref, const std::string& hostView,
                                  const ReadAt& at) {
  const std::string key = ref + "#at" + std::to_string(loads_.size());
  KernelOperand k{ref, hostView, "x" + std::to_string(loads_.size()), false, at};
  order_.push_back(key);
  loads_[key] = k;
  return k.arg;
}

std::vector<KernelOperand> GroupState::operands() const {
  std::vector<KernelOperand> out;
  for (const auto& key : order_) out.push_back(loads_.at(key));
  return out;
}

void KernelSignature::addPointers(const std::vector<KernelOperand>& ops,
                                  const std::vector<std::string>& stores,
                                  const std::function<std::string(const std::string&)>& storeArg) {
  for (const auto& o : ops) add("p_" + o.arg, "_" + o.arg);
  for (const auto& s : stores) add("out_" + s, storeArg(s));
}

void KernelSignature::addStrides(const std::vector<KernelOperand>& ops, int rank) {
  for (const auto& o : ops) {
    for (int d = 0; d < rank; ++d) params.push_back(o.arg + "_s" + std::to_string(d));
    args.push_back("*_" + o.arg + ".stride()");
  }
}

void KernelSignature::constexprs(const std::vector<std::string>& names) {
  for (const auto& n : names) params.push_back(n + ": tl.constexpr");
}

std::string KernelSignature::def(const std::string& name) const {
  return "@triton.jit\ndef " + name + "(" + join(params, ", ") + "):\n";
}

std::string nodeList(const OpGraph& g, const FusionGroup& group) {
  std::vector<std::string> ops;
  for (int i : group.nodes) ops.push_back(g.nodes[i].op);
  return join(ops, " -> ");
}

std::string allocate(const OpGraph& g, const std::string& name, const HostContext& host) {
  return std::string(kHost) + var(name) + " = torch.empty(" +
         host.shape(shapeOfValue(g, name), altShapeOfValue(g, name)) + ", device=" + host.device +
         ", dtype=torch." + dtypeOf(g, name) + ")\n";
}

std::string broadcastTo(const HostContext& host, const std::string& name,
                        const std::string& target) {
  return host.value(name) + ".expand(" + target + ")";
}

std::string channelView(const HostContext& host, const std::string& name, int rank,
                        const std::string& target) {
  std::string ones;
  for (int i = 2; i < rank; ++i) ones += ", 1";
  return host.value(name) + ".reshape(-1" + ones + ").expand(" + target + ")";
}

EpilogueView broadcastView(const HostContext& host, const std::string& dom, int rank) {
  return [&host, dom, rank](const std::string& ref, bool channel) {
    return channel ? channelView(host, ref, rank, dom) : broadcastTo(host, ref, dom);
  };
}

bool lowerEpilogue(const OpGraph& g, const FusionGroup& group, GroupState& st,
                   const EpilogueView& view, std::string& body, std::string& why) {
  for (std::size_t i = 1; i < group.nodes.size(); ++i) {
    const OpNode& n = g.nodes[group.nodes[i]];
    std::vector<std::string> args;
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const auto& in = n.inputs[k];
      const bool outside = in.isRef() && !st.inside(in.ref);
      args.push_back(st.operand(in, false, outside ? view(in.ref, rowOpChannelOperand(n, k)) : ""));
    }
    auto e = pointwiseExpr(n, args, why);
    if (!e) return false;
    body += statement(n, *e);
  }
  return true;
}

namespace {
std::string loadLine(const OpGraph& g, const KernelOperand& o, const std::string& offset,
                     const std::string& mask) {
  return std::string(kBody) + o.arg + " = tl.load(p_" + o.arg + " + " + offset + ", mask=" + mask +
         ", other=0.0)" + widen(dtypeOf(g, o.value)) + "\n";
}
}  // namespace

std::string loadOperands(const OpGraph& g, const std::vector<KernelOperand>& ops,
                         const std::vector<std::string>& coords, const std::string& mask) {
  std::string lines;
  for (const auto& o : ops) {
    std::vector<std::string> terms;
    std::string within = mask;
    for (std::size_t d = 0; d < coords.size(); ++d) {
      std::string c = coords[d];
      for (const auto& [dim, extent] : o.at.reversed) {
        if (dim == static_cast<int>(d)) c = "(" + std::to_string(extent - 1) + " - " + c + ")";
      }
      for (const auto& [dim, before, extent] : o.at.shifted) {
        if (dim != static_cast<int>(d)) continue;
        c = "(" + c + " - " + std::to_string(before) + ")";
        within += " & (" + c + " >= 0) & (" + c + " < " + std::to_string(extent) + ")";
      }
      if (static_cast<int>(d) == o.at.pieceDim) {
        within += " & (" + c + " >= " + std::to_string(o.at.pieceStart) + ") & (" + c + " < " +
                  std::to_string(o.at.pieceStop) + ")";
        c = "(" + c + " - " + std::to_string(o.at.pieceStart) + ")";
      }
      terms.push_back(c + " * " + o.arg + "_s" + std::to_string(d));
    }
    lines += loadLine(g, o, join(terms, " + "), within);
  }
  return lines;
}

std::string loadOperandsFlat(const OpGraph& g, const std::vector<KernelOperand>& ops,
                             const std::string& index, const std::string& mask) {
  std::string lines;
  for (const auto& o : ops) lines += loadLine(g, o, index, mask);
  return lines;
}

void KernelSignature::addOutputStrides(const std::vector<std::string>& stores, int rank) {
  for (const auto& out : stores) {
    for (int i = 0; i < rank; ++i) params.push_back("out_" + out + "_s" + std::to_string(i));
    args.push_back("*" + var(out) + ".stride()");
  }
}

std::string storeOutputs(const std::vector<std::string>& stores,
                         const std::vector<std::string>& coords, const std::string& mask) {
  std::string lines;
  for (const auto& out : stores) {
    std::vector<std::string> terms = {"out_" + out};
    for (std::size_t d = 0; d < coords.size(); ++d)
      terms.push_back(coords[d] + " * out_" + out + "_s" + std::to_string(d));
    lines += std::string(kBody) + "tl.store(" + join(terms, " + ") + ", " + var(out) +
             ", mask=" + mask + ")\n";
  }
  return lines;
}

std::string bindOperands(const std::vector<KernelOperand>& ops) {
  std::string lines;
  for (const auto& o : ops) lines += std::string(kHost) + "_" + o.arg + " = " + o.hostView + "\n";
  return lines;
}

std::string launchOptions(const Tiling& t) {
  return ", num_warps=" + std::to_string(t.warps) +
         (t.stages > 0 ? ", num_stages=" + std::to_string(t.stages) : "");
}

std::string pipelinedLaunchOptions(const Tiling& t, int elementBytes, const std::string& device) {
  if (t.stages <= 0) return launchOptions(t);
  const long stageBytes =
      (static_cast<long>(t.blockM) * t.blockK + static_cast<long>(t.blockK) * t.blockN) *
      elementBytes;
  return ", num_warps=" + std::to_string(t.warps) + ", num_stages=_stages(" +
         std::to_string(t.stages) + ", " + std::to_string(stageBytes) + ", " + device + ")";
}

std::string bf16SplitLines(const std::string& dst, const std::string& lo, const std::string& mask) {
  const std::string b = kBody;
  return b + "# hi: v rounded to bfloat16 (8 significant bits); lo: the rest, rounded to\n" + b +
         "# bfloat16 too, so hi + lo keeps 16 of v's 24 bits. An infinite v keeps lo 0.\n" + b +
         "hi = v.to(tl.bfloat16)\n" + b + "tl.store(" + dst + " + at, hi, mask=" + mask + ")\n" +
         b + "rest = v - hi.to(tl.float32)\n" + b + "tl.store(" + lo +
         " + at, tl.where(rest == rest, rest, 0.0).to(tl.bfloat16), mask=" + mask + ")\n";
}

int dtypeBytes(const std::string& dtype) {
  if (dtype == "float64" || dtype == "int64") return 8;
  if (dtype == "float16" || dtype == "bfloat16" || dtype == "int16") return 2;
  if (dtype == "int8" || dtype == "uint8" || dtype == "bool") return 1;
  return 4;
}

// `text`'s lines one level deeper.
std::string indented(const std::string& text) {
  std::string out;
  std::size_t from = 0;
  while (from < text.size()) {
    const std::size_t end = text.find('\n', from);
    const std::size_t stop = end == std::string::npos ? text.size() : end + 1;
    out += std::string(kBody) + text.substr(from, stop - from);
    from = stop;
  }
  return out;
}

}  // namespace crucible::kernel_synth
