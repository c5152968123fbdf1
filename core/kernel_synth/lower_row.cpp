// Row programs: a row is the domain's positions that one reduction or normalisation combines
// (one or several reduced dimensions, plus the channels of one group for group norm); each
// program holds ROWS whole rows ([ROWS, BLOCK_R]) and reduces along axis 1.
#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "core/kernel_synth/graph_rewrite.h"
#include "core/kernel_synth/lowering_support.h"
#include "core/kernel_synth/pointwise_expr.h"
#include "core/kernel_synth/row_ops.h"

namespace crucible::kernel_synth {

namespace {

/// How each domain dimension is indexed: from the row number, the column, or both (a split).
struct RowLayout {
  std::vector<int> rowDims;  // ascending: kept dims and the split dim's group index
  std::vector<int> colDims;  // ascending: reduced dims and the split dim's index in its group
  std::vector<int> keptDims;
  int split = -1;
  std::int64_t parts = 0;

  RowLayout(int rank, const RowReduction& r) : split(r.splitDim), parts(r.splitParts) {
    for (int d = 0; d < rank; ++d) {
      const bool reduced = std::find(r.dims.begin(), r.dims.end(), d) != r.dims.end();
      if (d == split) {
        rowDims.push_back(d);
        colDims.push_back(d);
      } else if (reduced) {
        colDims.push_back(d);
      } else {
        rowDims.push_back(d);
        keptDims.push_back(d);
      }
    }
  }
  /// The kernel expression of dimension d's coordinate.
  std::string coord(int d) const {
    const std::string s = std::to_string(d);
    if (d == split) return "(r" + s + " * cs" + s + " + k" + s + ")";
    return std::find(colDims.begin(), colDims.end(), d) != colDims.end() ? "k" + s : "r" + s;
  }
  /// Host expressions of dim d's extent across rows (rs) and within a row (cs).
  std::string rowExtent(int d, const std::string& dom) const {
    return d == split ? std::to_string(parts) : dom + "[" + std::to_string(d) + "]";
  }
  std::string colExtent(int d, const std::string& dom) const {
    const std::string e = dom + "[" + std::to_string(d) + "]";
    return d == split ? "(" + e + " // " + std::to_string(parts) + ")" : e;
  }
};

/// Rows up to kLongestWholeRow are held whole; longer ones (norms only: other reductions are
/// nested by graph_rewrite) are walked in chunks of kChunk.
constexpr int kChunk = 2048;
/// How many programs the parts of long rows aim at: enough to fill a large GPU twice over.
constexpr int kSplitPrograms = 4096;
/// Where the tile fits the shape (GPUs), a program of short rows holds this many elements at
/// least: a few per thread of its warps.
constexpr int kShortRowElements = 2048;

/// Whether `code` uses the variable `name` (not as part of a longer identifier).
bool namesVariable(const std::string& code, const std::string& name) {
  auto identifier = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    const bool startsClean = at == 0 || !identifier(code[at - 1]);
    const std::size_t end = at + name.size();
    if (startsClean && (end == code.size() || !identifier(code[end]))) return true;
  }
  return false;
}

/// Kernel lines giving each coordinate `<prefix><d>` over `dims` (last fastest) from `index`
/// on its own: (index // the extents after d) % d's extent (none for the first dim), so a
/// coordinate no address uses costs nothing: the compiler drops it.
std::string coordinatesOf(const std::string& index, const std::vector<int>& dims,
                          const std::string& prefix, const std::string& extent) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    std::vector<std::string> inner;
    for (std::size_t j = i + 1; j < dims.size(); ++j)
      inner.push_back(extent + std::to_string(dims[j]));
    std::string v = inner.empty()
                        ? index
                        : "(" + index + " // " +
                              (inner.size() == 1 ? inner[0] : "(" + join(inner, " * ") + ")") + ")";
    if (i > 0) v += " % " + extent + std::to_string(dims[i]);
    s += std::string(kBody) + prefix + std::to_string(dims[i]) + " = " + v + "\n";
  }
  return s;
}

/// The reduced dims given back to a row-space value that dropped them, for its host view.
std::string unsqueezeReduced(const RowReduction& r) {
  std::string s;
  for (int d : r.dims) s += ".unsqueeze(" + std::to_string(d) + ")";
  return s;
}

/// One row group's lowering: the body from the group's nodes, then the kernels (whole rows in
/// registers, or a split norm's two passes over long rows) and the host lines.
class RowLowering : private GroupLowering {
 public:
  explicit RowLowering(const LoweringInput& in)
      : GroupLowering(in),
        rank_(static_cast<int>(in.group.domain.size())),
        layout_(rank_, in.group.reduce),
        dom_("_dom" + std::to_string(in.index)),
        name_("k" + std::to_string(in.index) + "_row"),
        stats_("_stats" + std::to_string(in.index)) {}

  std::optional<LoweredGroup> lower(std::string& why) {
    if (!buildBody(why)) return std::nullopt;
    ops_ = st.operands();
    planColumns();
    looped_ = wantsParts();
    for (int d : group.reduce.dims) what_ += (what_.empty() ? "" : ", ") + std::to_string(d);
    if (layout_.split >= 0) {
      what_ += " and dim " + std::to_string(layout_.split) + " in " +
               std::to_string(layout_.parts) + " groups";
    }
    // Built once for the kernels' parameters and the launches' arguments. A split norm's first
    // kernel takes only what its statistics read.
    statsSig_ = looped_ ? signature(before_ + norm_->input, false, true) : KernelSignature{};
    mainSig_ = signature("", true, looped_);
    std::string kernels = looped_ ? partKernels() : wholeRowKernel();
    // tl.reduce's combine function for a product, defined before the kernel that names it
    if (namesVariable(kernels, "_multiply")) {
      kernels = "@triton.jit\ndef _multiply(a, b):\n" + std::string(kBody) + "return a * b\n\n\n" +
                kernels;
    }
    return LoweredGroup{
        kernels, hostLines(),
        "group " + std::to_string(index) + " row program [" + nodeList(g, group) + "] over dim " +
            what_ +
            (looped_ ? ": long rows cut into parts, partial statistics then the output, warps="
                     : ": whole rows in registers, ROWS=" + std::to_string(t.rows) + ", warps=") +
            std::to_string(t.warps)};
  }

 private:
  bool isRow(const std::string& name) const {
    auto it = rowValue_.find(name);
    return it != rowValue_.end() && it->second;
  }

  /// The domain's shape on the alternative batch: the first node whose shape is the domain.
  std::optional<Shape> domainAlt() const {
    std::optional<Shape> domAlt;
    for (int ni : group.nodes) {
      const OpNode& n = g.nodes[ni];
      if (n.shape == group.domain) domAlt = n.altShape;
      if (!n.inputs.empty() && n.inputs[0].isRef() &&
          shapeOfValue(g, n.inputs[0].ref) == group.domain && !domAlt) {
        domAlt = altShapeOfValue(g, n.inputs[0].ref);
      }
    }
    return domAlt;
  }

  /// The kernel variables of node `n`'s operands, registered in st. Row-space ones are
  /// expanded to the node's shape (then given back the reduced dims when the node dropped
  /// them) before the domain; full-space ones straight to the domain.
  std::optional<std::vector<std::string>> operandsOf(const OpNode& n, std::string& why) {
    const bool rowNode = n.shape != group.domain;
    const bool pointwise = opKind(n) == OpKind::Pointwise;
    std::vector<std::string> args;
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const Operand& in = n.inputs[k];
      // one class index per row
      const bool target = (n.op == "cross_entropy" || n.op == "nll_loss") && k == 1;
      const bool inRow = pointwise ? rowNode : target;
      if (!pointwise && !rowOpReads(n, k)) {
        args.push_back("None");
        continue;
      }
      std::string view;
      if (in.isRef() && !st.inside(in.ref)) {
        if (inRow) {
          const bool dropped = n.shape.size() < group.domain.size();
          view = host.value(in.ref) + ".expand(" + host.shape(n.shape, n.altShape) + ")" +
                 (dropped ? unsqueezeReduced(group.reduce) : "") + ".expand(" + dom_ + ")";
        } else if (!pointwise && rowOpChannelOperand(n, k)) {
          view = channelView(host, in.ref, rank_, dom_);
        } else {
          view = broadcastTo(host, in.ref, dom_);
        }
      }
      args.push_back(st.operand(in, inRow, view));
      if (in.isRef() && st.inside(in.ref) && isRow(in.ref) && !pointwise && !target) {
        why = n.op + " of a value that is already reduced";
        return std::nullopt;
      }
    }
    return args;
  }

  /// The group's statements, whole (body_) and around its first row op (before_, after_).
  bool buildBody(std::string& why) {
    for (int ni : group.nodes) {
      const OpNode& n = g.nodes[ni];
      const bool rowNode = n.shape != group.domain;
      auto args = operandsOf(n, why);
      if (!args) return false;
      rowValue_[n.name] = rowNode;
      if (opKind(n) == OpKind::Pointwise) {
        auto e = pointwiseExpr(n, *args, why);
        if (!e) return false;
        body_ += statement(n, *e);
        (rowOps_ == 0 ? before_ : after_) += statement(n, *e);
        rowSpacePointwise_ = rowSpacePointwise_ || rowNode;
        continue;
      }
      auto lines = rowOpLines(n, *args, why);
      if (!lines) return false;
      body_ += *lines;
      if (++rowOps_ == 1) {
        norm_ = normParts(n, *args);
        normValue_ = var(n.name);
      }
    }
    return true;
  }

  /// A row over several dims reaches each element through per-element divisions by the
  /// extents (the column's coordinates), which makes a statistics pass clearly slower than the
  /// same pass over one run of addresses (docs/studies/row_index_study.py; figures in
  /// docs/PERFORMANCE.md). So where a view's offsets along the row's dims form one run, which
  /// the host checks (`_flat`, passed as a constexpr per view), its addresses are `cols` times
  /// the last dim's stride.
  void planColumns() {
    flatColumns_ = layout_.colDims.size() > 1;
    for (int d : layout_.colDims) colExtents_.push_back(layout_.colExtent(d, dom_));
    for (int d : layout_.colDims) colDimList_ += std::to_string(d) + ", ";
  }

  static std::string flatFlag(const std::string& p) { return "FLAT_" + p + ": tl.constexpr"; }

  std::string flatTest(const std::string& view) const {
    return "_flat(" + view + ".stride(), (" + colDimList_ + "), (" + join(colExtents_, ", ") +
           ", ))";
  }

  /// Rows longer than a program can hold in registers, for a group whose one row op is a norm
  /// (at --scale 4, batch norm over 128 x 48 x 48 positions per channel): each row is cut into
  /// parts that many programs walk in chunks, first for partial statistics, then to normalise.
  /// Few long rows would otherwise leave most of a GPU idle.
  bool wantsParts() const {
    std::int64_t rowLength = 1;
    for (int d : layout_.colDims)
      rowLength *= d == layout_.split ? group.domain[d] / layout_.parts : group.domain[d];
    bool looped = rowOps_ == 1 && norm_ && !rowSpacePointwise_ && rowLength > kLongestWholeRow;
    for (const auto& o : ops_) looped = looped && !o.rowSpace;
    for (const auto& s : group.stores) looped = looped && !isRow(s);
    return looped;
  }

  /// The kernel's parameters: the operands `code` names (all when empty), the stores when
  /// asked, then the extents; `split`: the two kernels of a split norm, which also take the
  /// statistics.
  KernelSignature signature(const std::string& code, bool withStores, bool split) const {
    KernelSignature sig;
    for (const auto& o : ops_) {
      if (!code.empty() && !namesVariable(code, o.arg)) continue;
      sig.add("p_" + o.arg, "_" + o.arg);
      for (int i = 0; i < rank_; ++i) sig.params.push_back(o.arg + "_s" + std::to_string(i));
      sig.args.push_back("*_" + o.arg + ".stride()");
      if (flatColumns_ && !o.rowSpace) sig.add(flatFlag(o.arg), flatTest("_" + o.arg));
    }
    for (const auto& s : withStores ? group.stores : std::vector<std::string>{}) {
      sig.add("out_" + s, var(s));
      for (int i = 0; i < rank_; ++i) sig.params.push_back("out_" + s + "_s" + std::to_string(i));
      const bool dropped = shapeOfValue(g, s).size() < group.domain.size();
      const std::string view = var(s) + (dropped ? unsqueezeReduced(group.reduce) : "");
      sig.args.push_back("*" + view + ".stride()");
      if (flatColumns_ && !isRow(s)) sig.add(flatFlag("out_" + s), flatTest(view));
    }
    if (split) sig.add("p_stats", stats_);
    if (!split) sig.add("n_rows", "_rows");  // a split row's program count is exact
    sig.add("R", "_R");
    // Extents the coordinates need: every row dim but the first (which takes the remainder),
    // every column dim but the first, and the split dim's group size.
    for (std::size_t i = 1; i < layout_.rowDims.size(); ++i) {
      const int d = layout_.rowDims[i];
      sig.add("rs" + std::to_string(d), layout_.rowExtent(d, dom_));
    }
    for (std::size_t i = 0; i < layout_.colDims.size(); ++i) {
      const int d = layout_.colDims[i];
      if (i > 0 || d == layout_.split)
        sig.add("cs" + std::to_string(d), layout_.colExtent(d, dom_));
    }
    if (split) {
      sig.add("SPLITS", "_splits");
      sig.add("SPAN", "_span");
    }
    return sig;
  }

  bool kept(int d) const {
    return std::find(layout_.keptDims.begin(), layout_.keptDims.end(), d) != layout_.keptDims.end();
  }

  /// The address of `p`'s element at the current position (its row's only, `rowOnly`).
  std::string address(const std::string& p, bool rowOnly, const std::string& pointer) const {
    std::vector<std::string> terms = {pointer};
    // A reduction over every dim has one row and no row coordinates; its addresses still span
    // the program's ROWS, as its values do.
    if (layout_.rowDims.empty()) terms.push_back("rows * 0");
    if (flatColumns_ && !rowOnly) {
      // the row's own dims, then the columns: one run of addresses, or coordinate by coordinate
      std::vector<std::string> cols;
      for (int d = 0; d < rank_; ++d) {
        const std::string s = p + "_s" + std::to_string(d);
        if (d == layout_.split)
          terms.push_back("r" + std::to_string(d) + " * cs" + std::to_string(d) + " * " + s);
        else if (kept(d))
          terms.push_back("r" + std::to_string(d) + " * " + s);
        if (std::find(layout_.colDims.begin(), layout_.colDims.end(), d) != layout_.colDims.end())
          cols.push_back("k" + std::to_string(d) + " * " + s);
      }
      terms.push_back("(cols * " + p + "_s" + std::to_string(layout_.colDims.back()) + " if FLAT_" +
                      p + " else " + join(cols, " + ") + ")");
      return join(terms, " + ");
    }
    for (int d = 0; d < rank_; ++d) {
      if (rowOnly && !kept(d)) continue;
      terms.push_back(layout_.coord(d) + " * " + p + "_s" + std::to_string(d));
    }
    return join(terms, " + ");
  }

  /// The loads of the operands `code` names (all of them when `code` is empty).
  std::string loadsFor(const std::string& code) const {
    std::string lines;
    for (const auto& o : ops_) {
      if (!code.empty() && !namesVariable(code, o.arg)) continue;
      const std::string dtype = dtypeOf(g, o.value);
      lines += std::string(kBody) + o.arg + " = tl.load(" +
               address(o.arg, o.rowSpace, "p_" + o.arg) +
               ", mask=" + (o.rowSpace ? "rmask" : "fmask") +
               ", other=" + (isFloat(dtype) ? "0.0" : "0") + ")" + widen(dtype) + "\n";
    }
    return lines;
  }

  std::string stores() const {
    std::string lines;
    for (const auto& s : group.stores) {
      const bool rowOnly = isRow(s);
      lines += std::string(kBody) + "tl.store(" + address("out_" + s, rowOnly, "out_" + s) + ", " +
               var(s) + ", mask=" + (rowOnly ? "rmask" : "fmask") + ")\n";
    }
    return lines;
  }

  std::string columns() const {
    return std::string(kBody) + "# the column's coordinates in the dimensions a row runs over\n" +
           coordinatesOf("cols", layout_.colDims, "k", "cs");
  }

  std::string rowCoordinates() const {
    if (layout_.rowDims.empty()) return {};
    return std::string(kBody) + "# the row's coordinates in the dimensions that tell rows apart\n" +
           coordinatesOf("rows", layout_.rowDims, "r", "rs");
  }

  /// One program per part: its row, then a walk over the part's SPAN columns in chunks (1-D).
  std::string part(const std::string& inner) const {
    const std::string work = before_ + inner;
    const std::string chunk = std::string(kBody) + "cols = start + c0 + tl.arange(0, BLOCK_R)\n" +
                              kBody + "fmask = cols < R\n" + columns() + loadsFor(work) + work;
    return std::string(kBody) + "rows = tl.program_id(0) // SPLITS\n" + rowCoordinates() + kBody +
           "start = (tl.program_id(0) % SPLITS) * SPAN\n" + kBody +
           "for c0 in range(0, SPAN, BLOCK_R):\n" + indented(chunk);
  }

  /// A split norm's two kernels: partial statistics per part, then the output.
  std::string partKernels() const {
    const std::string& v = normValue_;
    const std::string& x = norm_->input;
    // Each chunk's count, mean and squared deviations around that mean, merged into the part's
    // running ones by Chan, Golub and LeVeque's pairwise formula: no division per element, and
    // no sum of squares whose difference would cancel when the mean is large.
    const std::string statsInner =
        std::string(kBody) + "chunk_n = tl.sum(fmask.to(tl.float32), axis=0)\n" + kBody +
        "chunk_mean = tl.sum(tl.where(fmask, " + x +
        ", 0.0), axis=0) / tl.maximum(chunk_n, 1.0)\n" + kBody + "chunk_d = tl.where(fmask, " + x +
        " - chunk_mean, 0.0)\n" + kBody + "total = n + chunk_n\n" + kBody +
        "delta = chunk_mean - mean\n" + kBody + "mean += delta * (chunk_n / total)\n" + kBody +
        "m2 += tl.sum(chunk_d * chunk_d, axis=0) + delta * delta * (n * chunk_n / total)\n" +
        kBody + "n = total\n";
    std::ostringstream k;
    KernelSignature statsDef = statsSig_;
    statsDef.constexprs({"BLOCK_R"});
    k << statsDef.def(name_ + "_stats");
    k << kBody << "# " << nodeList(g, group) << " over dim " << what_
      << ", pass 1 of 2: each program reads one part\n"
      << kBody << "# (SPAN columns) of one row and writes the part's mean and sum of squared\n"
      << kBody << "# deviations, merged chunk by chunk, to p_stats.\n";
    k << kBody << "n = 0.0\n";
    k << kBody << "mean = 0.0\n";
    k << kBody << "m2 = 0.0\n";
    k << part(statsInner);
    k << kBody << "tl.store(p_stats + tl.program_id(0) * 2, mean)\n";
    k << kBody << "tl.store(p_stats + tl.program_id(0) * 2 + 1, m2)\n\n\n";
    KernelSignature outDef = mainSig_;
    outDef.constexprs({"SPLITS_P2", "BLOCK_R"});
    k << outDef.def(name_);
    k << kBody << "# " << nodeList(g, group) << " over dim " << what_
      << ", pass 2 of 2: each program combines\n"
      << kBody << "# the SPLITS partial statistics of its row, then normalises its part of it.\n";
    k << kBody << "parts = tl.arange(0, SPLITS_P2)\n";
    k << kBody << "pmask = parts < SPLITS\n";
    k << kBody << "part_slot = ((tl.program_id(0) // SPLITS) * SPLITS + parts) * 2\n";
    k << kBody
      << "part_n = tl.where(pmask, tl.minimum(R - parts * SPAN, SPAN), 0).to(tl.float32)\n";
    k << kBody << "part_mean = tl.load(p_stats + part_slot, mask=pmask, other=0.0)\n";
    k << kBody << "part_m2 = tl.load(p_stats + part_slot + 1, mask=pmask, other=0.0)\n";
    k << kBody << v << "_mean = tl.sum(part_n * part_mean, axis=0) / R\n";
    k << kBody << "part_dev = part_mean - " << v << "_mean\n";
    k << kBody << v << "_var = tl.sum(part_m2 + part_n * part_dev * part_dev, axis=0) / R\n";
    k << part(std::string(kBody) + v + "_c = " + x + " - " + v + "_mean\n" + norm_->apply + after_ +
              stores());
    return k.str();
  }

  /// ROWS whole rows per program, in registers.
  std::string wholeRowKernel() const {
    std::ostringstream k;
    KernelSignature def = mainSig_;
    def.constexprs({"ROWS", "BLOCK_R"});
    k << def.def(name_);
    k << kBody << "# " << nodeList(g, group) << " over dim " << what_
      << ": each program holds ROWS whole rows of R elements.\n";
    k << kBody << "rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]\n";
    k << kBody << "rmask = rows < n_rows\n";
    k << rowCoordinates();
    k << kBody << "cols = tl.arange(0, BLOCK_R)[None, :]\n";
    k << kBody << "fmask = rmask & (cols < R)\n";
    k << columns() << loadsFor("") << body_ << stores();
    return k.str();
  }

  std::string hostLines() const {
    std::vector<std::string> within;
    for (int d : layout_.colDims) within.push_back(layout_.colExtent(d, dom_));
    const int rowsCap = 16384;
    std::ostringstream h;
    h << kHost << "# group " << index << ": " << nodeList(g, group) << " (row program over dim "
      << what_ << ")\n";
    h << kHost << dom_ << " = " << host.shape(group.domain, domainAlt()) << "\n";
    for (const auto& s : group.stores) h << allocate(g, s, host);
    h << kHost << "_R = " << join(within, " * ") << "\n";
    h << kHost << "_rows = _prod(" << dom_ << ") // _R\n";
    if (looped_) {
      h << kHost << "_block_r = min(_next_power_of_2(_R), " << kChunk << ")\n";
      h << kHost << "# each row in parts, so that about " << kSplitPrograms
        << " programs share the work\n";
      h << kHost << "_splits = max(1, min(_cdiv(_R, _block_r), _cdiv(" << kSplitPrograms
        << ", _rows)))\n";
      h << kHost << "_span = _cdiv(_cdiv(_R, _splits), _block_r) * _block_r\n";
      h << kHost << "_splits = _cdiv(_R, _span)\n";
      h << kHost << stats_ << " = torch.empty((_rows * _splits * 2,), device=" << host.device
        << ", dtype=torch.float32)\n";
    } else {
      h << kHost << "_block_r = _next_power_of_2(_R)\n";
      // Short rows on a GPU: enough of them per program for every thread to hold a few
      // elements, not one row of a handful spread over a whole program.
      const std::string rows = t.fitToShape
                                   ? "max(" + std::to_string(t.rows) + ", " +
                                         std::to_string(kShortRowElements) + " // _block_r)"
                                   : std::to_string(t.rows);
      h << kHost << "_per = max(1, min(" << rows << ", " << rowsCap << " // _block_r))\n";
    }
    // Long rows (a norm over a whole image) get more warps, so each thread holds fewer
    // elements; a part's chunks, 8 per thread (more would spill the registers the index math
    // needs).
    h << kHost << "_warps = max(" << t.warps << ", "
      << (looped_ ? "_block_r // 256" : "min(16, _block_r // 2048)") << ")\n";
    h << bindOperands(ops_);
    const std::string options =
        ", BLOCK_R=_block_r, num_warps=_warps" +
        (t.stages > 0 ? ", num_stages=" + std::to_string(t.stages) : std::string());
    if (looped_) {
      h << kHost << name_ << "_stats[(_rows * _splits,)](" << join(statsSig_.args, ", ") << options
        << ")\n";
      h << kHost << name_ << "[(_rows * _splits,)](" << join(mainSig_.args, ", ")
        << ", SPLITS_P2=_next_power_of_2(_splits)" << options << ")\n";
    } else {
      h << kHost << name_ << "[(_cdiv(_rows, _per),)](" << join(mainSig_.args, ", ")
        << ", ROWS=_per" << options << ")\n";
    }
    return h.str();
  }

  const int rank_;
  const RowLayout layout_;
  const std::string dom_, name_;
  const std::string stats_;               // split norms' partial statistics
  std::map<std::string, bool> rowValue_;  // value -> one per row ([ROWS, 1])
  std::string body_;
  // The same body in pieces for the looped form: pointwise lines before and after one norm.
  std::string before_, after_;
  std::optional<NormParts> norm_;
  std::string normValue_;
  int rowOps_ = 0;
  bool rowSpacePointwise_ = false;
  std::vector<KernelOperand> ops_;
  bool flatColumns_ = false;
  std::vector<std::string> colExtents_;
  std::string colDimList_;
  bool looped_ = false;
  std::string what_;
  KernelSignature statsSig_, mainSig_;
};

}  // namespace

std::optional<LoweredGroup> lowerRow(const LoweringInput& in, std::string& why) {
  return RowLowering(in).lower(why);
}

}  // namespace crucible::kernel_synth
