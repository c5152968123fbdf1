// Pointwise groups: a flat index space over the output shape, one element per lane.
#include <sstream>

#include "core/kernel_synth/lowering_support.h"
#include "core/kernel_synth/pointwise_expr.h"

namespace crucible::kernel_synth {

std::optional<LoweredGroup> lowerPointwise(const LoweringInput& in, std::string& why) {
  const auto& [g, group, index, t, host] = in;
  GroupState st(g, group);
  const int rank = static_cast<int>(group.domain.size());
  const std::string dom = "_dom" + std::to_string(index);
  std::string body;
  for (int ni : group.nodes) {
    const OpNode& n = g.nodes[ni];
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
  if (!ops.empty()) {
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
    h << indent << n << "[(triton.cdiv(_n, " << t.block << "),)](" << join(s.args, ", ")
      << ", BLOCK=" << t.block << launchOptions(t) << ")\n";
  };
  if (ops.empty()) {
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
