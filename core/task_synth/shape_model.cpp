#include "core/task_synth/shape_model.h"

#include <array>
#include <bit>
#include <gecode/int.hh>
#include <gecode/minimodel.hh>
#include <gecode/search.hh>
#include <memory>

namespace crucible::task_synth {

namespace {

using namespace Gecode;
constexpr int R = kMaxRank;
/// Bytes per element of cosine_similarity's broadcast temporaries (three float32 products).
constexpr int kBroadcastTemporaries = 12;

/// The variables that describe one tensor: rank and dims in the right-aligned frame (positions
/// before the rank hold 1), and the element count.
struct TensorVars {
  IntVar rank;
  IntVarArgs dims;
  IntVar numel;
  std::array<int, R> kept{};  // each dim's index among the kept variables (read back)
};

/// Where the variables that are read back live in the space's array.
struct Layout {
  struct Tensor {
    int rank = -1;
    std::array<int, R> dims{};
  };
  std::vector<Tensor> tensors;
  std::vector<std::vector<std::pair<std::string, int>>> params;  // per node: name -> variable
  int flops = -1;
  int bytes = -1;
};

/// Which brancher a kept variable belongs to, in branching order.
enum class Group { Ranks, Choices, Sizes, Totals };

/// A size in [min, max] with roughly log-uniform magnitude: a random bit length, then a
/// random value of that length (integers only, so every platform picks the same). One time in
/// twelve 1, where 1 is allowed, so that broadcasting happens.
int logUniformValue(Rnd rnd, IntVar x) {
  const int lo = x.min(), hi = x.max();
  if (x.in(1) && rnd(12) == 0) return 1;
  // Below that chance, 1 is not drawn (a bit length of 1 would make it as likely as any).
  const int loBits = std::bit_width(static_cast<unsigned>(lo == 1 && hi > 1 ? 2 : lo));
  const int hiBits = std::bit_width(static_cast<unsigned>(hi));
  const int bits = loBits + static_cast<int>(rnd(static_cast<unsigned>(hiBits - loBits + 1)));
  const long long from = std::max<long long>(lo, 1LL << (bits - 1));
  const long long to = std::min<long long>(hi, (1LL << bits) - 1);
  const int target = static_cast<int>(from + rnd(static_cast<unsigned>(to - from + 1)));
  for (IntVarRanges r(x); r(); ++r) {
    if (r.max() >= target) return std::max(r.min(), target);
  }
  return hi;
}

class ShapeSpace : public Space {
 public:
  ShapeSpace(const Program& program, const ShapeBounds& bounds, unsigned seed);
  ShapeSpace(ShapeSpace& other) : Space(other), layout_(other.layout_) {
    vars_.update(*this, other.vars_);
  }
  Space* copy() override { return new ShapeSpace(*this); }

  int value(int index) const { return vars_[index].val(); }
  const Layout& layout() const { return *layout_; }

 private:
  IntVarArray vars_;
  std::shared_ptr<Layout> layout_;
};

/// Posts the model into a ShapeSpace. Kept variables are those read back or branched on.
class ModelBuilder {
 public:
  ModelBuilder(Space& home, const ShapeBounds& bounds) : home_(home), bounds_(bounds) {}

  int keep(IntVar v, Group group) {
    kept_ << v;
    if (group == Group::Ranks) ranks_ << v;
    if (group == Group::Choices) choices_ << v;
    if (group == Group::Sizes) sizes_ << v;
    return kept_.size() - 1;
  }
  IntVar kept(int lo, int hi, Group group, int* index = nullptr) {
    IntVar v(home_, lo, hi);
    const int i = keep(v, group);
    if (index) *index = i;
    return v;
  }

  /// The product of `factors` as a new variable in [1, bound] (a chain of mult propagators).
  IntVar product(std::vector<IntVar> factors, long long bound) {
    const int cap = static_cast<int>(std::min<long long>(bound, Int::Limits::max));
    IntVar acc = factors.front();
    for (std::size_t i = 1; i < factors.size(); ++i) {
      IntVar next(home_, 1, cap);
      mult(home_, acc, factors[i], next);
      acc = next;
    }
    if (factors.size() == 1) {
      IntVar bounded(home_, 1, cap);
      rel(home_, bounded == acc);
      acc = bounded;
    }
    return acc;
  }

  TensorVars tensor(const TensorNode& node, Layout::Tensor& where) {
    const int lo = std::max(1, node.ranks.lo), hi = std::min(R, node.ranks.hi);
    if (lo > hi) throw ShapeError(ShapeError::Kind::Infeasible, "a tensor has no possible rank");
    TensorVars t{kept(lo, hi, Group::Ranks, &where.rank), IntVarArgs(R), IntVar(), {}};
    for (int i = 0; i < R; ++i) {
      t.dims[i] = kept(1, bounds_.maxDim, Group::Sizes, &where.dims[i]);
      t.kept[i] = where.dims[i];
      // Position i is present when i >= R - rank; absent positions hold 1.
      rel(home_, (t.rank < R - i) >> (t.dims[i] == 1));
    }
    const int size = node.dtype == DtypeRule::Index ? 8 : 4;
    t.numel = product({t.dims[0], t.dims[1], t.dims[2], t.dims[3]}, bounds_.maxBytes / size);
    byteTerms_ << t.numel;
    byteCoefficients_ << size;
    return t;
  }

  void countParameterBytes(IntVar elements) {
    byteTerms_ << elements;
    byteCoefficients_ << 4;
  }

  /// x*y style reductions over a broadcast: the operands broadcast to one shape, reduced
  /// along `dim`.
  void broadcastReduce(const OpSpec& op, const std::vector<TensorVars>& in, const TensorVars& out,
                       IntVar flops, std::vector<std::pair<std::string, int>>& params) {
    TensorVars joined{IntVar(home_, 1, R), IntVarArgs(R), IntVar(), {}};
    for (int i = 0; i < R; ++i) joined.dims[i] = IntVar(home_, 1, bounds_.maxDim);
    broadcast(in, joined);
    const IntVar p = dimPosition(joined.rank, params, "dim");
    reduce(joined, out, p, IntVar(home_, 0, 0), op.minExtent);
    // PyTorch materialises the broadcast products (x*y, x*x, y*y): they cost time and
    // memory, however small the inputs.
    joined.numel = product({joined.dims[0], joined.dims[1], joined.dims[2], joined.dims[3]},
                           bounds_.maxBytes / kBroadcastTemporaries);
    byteTerms_ << joined.numel;
    byteCoefficients_ << kBroadcastTemporaries;
    rel(home_, flops == op.flopsPerElement * joined.numel);
  }

  /// matmul (rank 2) and bmm (rank 3).
  void matmul(const OpSpec& op, const std::vector<TensorVars>& in, const TensorVars& out,
              IntVar flops) {
    const int rank = op.rule == ShapeRule::Matmul ? 2 : 3;
    for (const auto* t : {&in[0], &in[1], &out}) rel(home_, t->rank == rank);
    if (rank == 3) {
      rel(home_, in[0].dims[1] == in[1].dims[1] && out.dims[1] == in[0].dims[1]);
    }
    rel(home_, in[0].dims[3] == in[1].dims[2]);
    rel(home_, out.dims[2] == in[0].dims[2] && out.dims[3] == in[1].dims[3]);
    std::vector<IntVar> factors{in[0].dims[2], in[0].dims[3], in[1].dims[3]};
    if (rank == 3) factors.push_back(in[0].dims[1]);
    rel(home_, flops == 2 * product(factors, bounds_.maxFlops));
  }

  /// nn.Linear over the last dim, with its weight and bias counted as parameter bytes.
  void linearLayer(const TensorVars& x, const TensorVars& out, IntVar flops,
                   std::vector<std::pair<std::string, int>>& params) {
    rel(home_, out.rank == x.rank);
    for (int i = 0; i < R - 1; ++i) rel(home_, out.dims[i] == x.dims[i]);
    params.emplace_back("in_features", x.kept[R - 1]);
    params.emplace_back("out_features", out.kept[R - 1]);
    rel(home_, flops == 2 * product({out.numel, x.dims[R - 1]}, bounds_.maxFlops));
    const IntVar weight = product({x.dims[R - 1], out.dims[R - 1]}, bounds_.maxBytes / 4);
    countParameterBytes(weight);
    countParameterBytes(out.dims[R - 1]);
  }

  void adaptivePool(const TensorVars& x, const TensorVars& out, IntVar flops,
                    std::vector<std::pair<std::string, int>>& params) {
    rel(home_, x.rank == 4 && out.rank == 4);
    rel(home_, out.dims[0] == x.dims[0] && out.dims[1] == x.dims[1]);
    rel(home_, out.dims[2] <= x.dims[2] && out.dims[3] <= x.dims[3]);
    params.emplace_back("height", out.kept[2]);
    params.emplace_back("width", out.kept[3]);
    rel(home_, flops == x.numel);
  }

  /// torch.cat of two tensors along `dim`.
  void cat(const std::vector<TensorVars>& in, const TensorVars& out, IntVar flops,
           std::vector<std::pair<std::string, int>>& params) {
    rel(home_, in[0].rank == in[1].rank && out.rank == in[0].rank);
    const IntVar p = dimPosition(in[0].rank, params, "dim");
    for (int i = 0; i < R; ++i) {
      rel(home_, (p == i) >> (out.dims[i] == in[0].dims[i] + in[1].dims[i]));
      rel(home_, (p != i) >> (in[0].dims[i] == in[1].dims[i] && out.dims[i] == in[0].dims[i]));
    }
    rel(home_, flops == out.numel);
  }

  /// The last two dims flattened into one.
  void flatten(const TensorVars& x, const TensorVars& out, IntVar flops) {
    rel(home_, out.rank == x.rank - 1);
    mult(home_, x.dims[R - 2], x.dims[R - 1], out.dims[R - 1]);
    for (int i = 1; i < R - 1; ++i) rel(home_, out.dims[i] == x.dims[i - 1]);
    rel(home_, flops == out.numel);
  }

  void post(const ComputeNode& node, const std::vector<TensorVars>& in, const TensorVars& out,
            std::vector<std::pair<std::string, int>>& params) {
    const OpSpec& op = *node.op;
    for (const auto& t : in) rel(home_, t.rank >= op.minRank && t.rank <= op.maxRank);
    IntVar flops(home_, 0, static_cast<int>(bounds_.maxFlops));
    flopTerms_ << flops;
    const int c = op.flopsPerElement;
    switch (op.rule) {
      case ShapeRule::Same:
        same(in[0], out);
        rel(home_, flops == c * out.numel);
        break;
      case ShapeRule::SameLastDim:
        same(in[0], out);
        rel(home_, in[0].dims[R - 1] >= op.minExtent);
        rel(home_, flops == c * out.numel);
        break;
      case ShapeRule::SameAlongDim: {
        same(in[0], out);
        const IntVar p = dimPosition(in[0].rank, params, "dim");
        rel(home_, extent(in[0].dims, p) >= op.minExtent);
        rel(home_, flops == c * out.numel);
        break;
      }
      case ShapeRule::Equal:
        for (const auto& t : in) same(t, out);
        rel(home_, flops == c * out.numel);
        break;
      case ShapeRule::Broadcast:
        broadcast(in, out);
        rel(home_, flops == c * out.numel);
        break;
      case ShapeRule::Reduce: {
        const IntVar p = dimPosition(in[0].rank, params, "dim");
        int keepIndex = -1;
        const IntVar keepdim = kept(0, 1, Group::Choices, &keepIndex);
        params.emplace_back("keepdim", keepIndex);
        reduce(in[0], out, p, keepdim, op.minExtent);
        rel(home_, flops == c * in[0].numel);
        break;
      }
      case ShapeRule::BroadcastReduce:
        broadcastReduce(op, in, out, flops, params);
        break;
      case ShapeRule::Matmul:
      case ShapeRule::Bmm:
        matmul(op, in, out, flops);
        break;
      case ShapeRule::Linear:
        linearLayer(in[0], out, flops, params);
        break;
      case ShapeRule::Conv:
      case ShapeRule::Pool:
        window(op, in[0], out, flops, params);
        break;
      case ShapeRule::AdaptivePool:
        adaptivePool(in[0], out, flops, params);
        break;
      case ShapeRule::Transpose:
        transpose(in[0], out, params);
        rel(home_, flops == out.numel);
        break;
      case ShapeRule::Cat:
        cat(in, out, flops, params);
        break;
      case ShapeRule::Flatten:
        flatten(in[0], out, flops);
        break;
      case ShapeRule::GroupNorm:
      case ShapeRule::BatchNorm:
      case ShapeRule::InstanceNorm:
        normalization(op, in[0], out, params);
        rel(home_, flops == c * out.numel);
        break;
    }
  }

  /// Closes the model: totals, output sizes, branchers. Returns the kept variables.
  IntVarArgs finish(const std::vector<TensorVars>& outputs, Layout& layout, Rnd rnd) {
    for (const auto& t : outputs) rel(home_, t.numel >= bounds_.minOutputElements);
    const IntVar flops = kept(static_cast<int>(bounds_.minFlops),
                              static_cast<int>(bounds_.maxFlops), Group::Totals, &layout.flops);
    linear(home_, flopTerms_, IRT_EQ, flops);
    const IntVar bytes = kept(0, static_cast<int>(bounds_.maxBytes), Group::Totals, &layout.bytes);
    linear(home_, byteCoefficients_, byteTerms_, IRT_EQ, bytes);
    // Ranks first, then the operators' discrete choices, then sizes (log-uniform values); the
    // totals are fixed by propagation once the sizes are.
    branch(home_, ranks_, INT_VAR_RND(rnd), INT_VAL_RND(rnd));
    if (choices_.size() > 0) branch(home_, choices_, INT_VAR_RND(rnd), INT_VAL_RND(rnd));
    branch(home_, sizes_, INT_VAR_RND(rnd),
           INT_VAL([rnd](const Space&, IntVar x, int) { return logUniformValue(rnd, x); }));
    return kept_;
  }

 private:
  void same(const TensorVars& a, const TensorVars& b) {
    rel(home_, a.rank == b.rank);
    for (int i = 0; i < R; ++i) rel(home_, a.dims[i] == b.dims[i]);
  }

  /// A `dim` argument as an aligned position (emitted as the negative index p - R).
  IntVar dimPosition(IntVar rank, std::vector<std::pair<std::string, int>>& params,
                     const std::string& name) {
    int index = -1;
    const IntVar p = kept(0, R - 1, Group::Choices, &index);
    rel(home_, p + rank >= R);
    params.emplace_back(name, index);
    return p;
  }

  IntVar extent(const IntVarArgs& dims, IntVar position) {
    IntVar e(home_, 1, bounds_.maxDim);
    element(home_, dims, position, e);
    return e;
  }

  void broadcast(const std::vector<TensorVars>& in, const TensorVars& out) {
    IntVarArgs ranks;
    for (const auto& t : in) ranks << t.rank;
    max(home_, ranks, out.rank);
    for (int i = 0; i < R; ++i) {
      IntVarArgs column;
      for (const auto& t : in) {
        column << t.dims[i];
        rel(home_, (t.dims[i] == out.dims[i]) || (t.dims[i] == 1));
      }
      max(home_, column, out.dims[i]);
    }
  }

  void reduce(const TensorVars& in, const TensorVars& out, IntVar p, IntVar keepdim,
              int minExtent) {
    rel(home_, out.rank == in.rank - 1 + keepdim);
    rel(home_, extent(in.dims, p) >= minExtent);
    for (int i = 0; i < R; ++i) {
      rel(home_, (keepdim == 1 && p == i) >> (out.dims[i] == 1));
      rel(home_, (keepdim == 1 && p != i) >> (out.dims[i] == in.dims[i]));
      rel(home_, (keepdim == 0 && p < i) >> (out.dims[i] == in.dims[i]));
      if (i > 0) rel(home_, (keepdim == 0 && p >= i) >> (out.dims[i] == in.dims[i - 1]));
    }
  }

  void transpose(const TensorVars& in, const TensorVars& out,
                 std::vector<std::pair<std::string, int>>& params) {
    rel(home_, out.rank == in.rank);
    const IntVar p0 = dimPosition(in.rank, params, "dim");
    const IntVar p1 = dimPosition(in.rank, params, "dim1");
    rel(home_, p0 < p1);
    for (int i = 0; i < R; ++i) {
      IntVar from(home_, 0, R - 1);
      rel(home_, (p0 == i) >> (from == p1));
      rel(home_, (p1 == i) >> (from == p0));
      rel(home_, (p0 != i && p1 != i) >> (from == i));
      element(home_, in.dims, from, out.dims[i]);
    }
  }

  /// Convolution and pooling: out = floor((L + 2 pad - kernel) / stride) + 1 per spatial dim.
  void window(const OpSpec& op, const TensorVars& in, const TensorVars& out, IntVar flops,
              std::vector<std::pair<std::string, int>>& params) {
    const int d = op.spatialDims, n = R - 2 - d;  // n: the batch position
    const bool conv = op.rule == ShapeRule::Conv;
    rel(home_, in.rank == 2 + d && out.rank == 2 + d);
    rel(home_, out.dims[n] == in.dims[n]);
    if (!conv) rel(home_, out.dims[n + 1] == in.dims[n + 1]);
    int k = -1, s = -1, pad = -1;
    const IntVar kernel = kept(conv ? 1 : 2, conv ? 7 : 4, Group::Choices, &k);
    const IntVar stride = kept(1, 3, Group::Choices, &s);
    const IntVar padding = kept(0, 3, Group::Choices, &pad);
    rel(home_, 2 * padding <= kernel);
    if (!conv) rel(home_, stride <= kernel);
    for (int j = n + 2; j < R; ++j) {
      const IntVar scaled = product({stride, out.dims[j]}, 3LL * bounds_.maxDim);
      rel(home_, in.dims[j] + 2 * padding - kernel >= scaled - stride);
      rel(home_, in.dims[j] + 2 * padding - kernel <= scaled - 1);
    }
    const IntVar window = d == 1 ? kernel : product({kernel, kernel}, 49);
    if (conv) {
      params.emplace_back("in_channels", in.kept[n + 1]);
      params.emplace_back("out_channels", out.kept[n + 1]);
      rel(home_, flops == 2 * product({out.numel, in.dims[n + 1], window}, bounds_.maxFlops));
      countParameterBytes(product({out.dims[n + 1], in.dims[n + 1], window}, bounds_.maxBytes / 4));
      countParameterBytes(out.dims[n + 1]);
    } else {
      rel(home_, flops == product({out.numel, window}, bounds_.maxFlops));
    }
    params.emplace_back("kernel", k);
    params.emplace_back("stride", s);
    params.emplace_back("pad", pad);
  }

  void normalization(const OpSpec& op, const TensorVars& in, const TensorVars& out,
                     std::vector<std::pair<std::string, int>>& params) {
    same(in, out);
    const IntVar batchPos = expr(home_, R - in.rank);
    const IntVar channelPos = expr(home_, R + 1 - in.rank);
    const IntVar batch = extent(in.dims, batchPos);
    const IntVar channels = extent(in.dims, channelPos);
    if (op.rule == ShapeRule::GroupNorm) {
      // channels = groups * per_group keeps divisibility propagating both ways; every group
      // normalises at least two values.
      int g = -1;
      const IntVar groups = kept(1, 16, Group::Choices, &g);
      const IntVar perGroup = kept(1, bounds_.maxDim, Group::Sizes);
      mult(home_, groups, perGroup, channels);
      rel(home_, in.numel >= 2 * product({batch, groups}, bounds_.maxBytes / 4));
      params.emplace_back("groups", g);
    } else if (op.rule == ShapeRule::BatchNorm) {
      rel(home_, in.numel >= 2 * channels);
    } else {
      rel(home_, in.numel >= 2 * product({batch, channels}, bounds_.maxBytes / 4));
    }
  }

  Space& home_;
  const ShapeBounds& bounds_;
  IntVarArgs kept_, ranks_, choices_, sizes_;
  IntVarArgs flopTerms_, byteTerms_;
  IntArgs byteCoefficients_;
};

ShapeSpace::ShapeSpace(const Program& program, const ShapeBounds& bounds, unsigned seed)
    : layout_(std::make_shared<Layout>()) {
  ModelBuilder model(*this, bounds);
  std::vector<TensorVars> tensors;
  layout_->tensors.resize(program.tensors.size());
  for (std::size_t t = 0; t < program.tensors.size(); ++t) {
    tensors.push_back(model.tensor(program.tensors[t], layout_->tensors[t]));
  }
  layout_->params.resize(program.nodes.size());
  for (std::size_t n = 0; n < program.nodes.size(); ++n) {
    const auto& node = program.nodes[n];
    std::vector<TensorVars> in;
    for (int t : node.inputs) in.push_back(tensors[t]);
    model.post(node, in, tensors[node.output], layout_->params[n]);
  }
  std::vector<TensorVars> outputs;
  for (int t : program.outputs()) outputs.push_back(tensors[t]);
  vars_ = IntVarArray(*this, model.finish(outputs, *layout_, Rnd(seed)));
}

/// Stops the search at the failure limit or when the caller cancels; both are deterministic
/// for a given run (no wall-clock limit, which would make results depend on machine load).
class SearchStop : public Search::Stop {
 public:
  SearchStop(std::uint64_t failLimit, std::stop_token token)
      : failLimit_(failLimit), token_(std::move(token)) {}
  bool stop(const Search::Statistics& s, const Search::Options&) override {
    return s.fail > failLimit_ || token_.stop_requested();
  }

 private:
  std::uint64_t failLimit_;
  std::stop_token token_;
};

}  // namespace

void ShapeBounds::validate() const {
  const long long limit = Int::Limits::max;
  auto check = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
  };
  check(maxDim >= 1 && maxDim <= (1 << 20), "max-dim must be in [1, 1048576]");
  check(maxFlops >= 1 && maxFlops <= limit,
        "max-flops must be in [1, " + std::to_string(limit) + "]");
  check(minFlops >= 0 && minFlops <= maxFlops, "min-flops must be in [0, max-flops]");
  check(maxBytes >= 64 && maxBytes <= limit,
        "max-bytes must be in [64, " + std::to_string(limit) + "]");
  check(minOutputElements >= 1 && minOutputElements <= maxBytes / 4,
        "min-output-elements must be in [1, max-bytes / 4]");
  check(failLimit >= 1, "the failure limit must be at least 1");
}

void to_json(nlohmann::json& j, const ShapeBounds& b) {
  j = {{"max_dim", b.maxDim},
       {"max_flops", b.maxFlops},
       {"min_flops", b.minFlops},
       {"max_bytes", b.maxBytes},
       {"min_output_elements", b.minOutputElements},
       {"fail_limit", b.failLimit}};
}

std::int64_t elementCount(const std::vector<int>& shape) {
  std::int64_t n = 1;
  for (int d : shape) n *= d;
  return n;
}

ShapeSolution solveShapes(const Program& program, const ShapeBounds& bounds, std::uint64_t seed,
                          std::stop_token stop) {
  bounds.validate();
  auto root = std::make_unique<ShapeSpace>(program, bounds, static_cast<unsigned>(seed));
  SearchStop stopper(bounds.failLimit, stop);
  Search::Options options;
  options.threads = 1;
  options.stop = &stopper;
  options.cutoff = Search::Cutoff::luby(64);
  RBS<ShapeSpace, DFS> engine(root.get(), options);
  std::unique_ptr<ShapeSpace> found(engine.next());
  const auto stats = engine.statistics();
  if (!found) {
    if (stop.stop_requested()) throw ShapeError(ShapeError::Kind::Cancelled, "cancelled");
    if (engine.stopped()) {
      throw ShapeError(ShapeError::Kind::LimitReached,
                       "no shape assignment found within " + std::to_string(bounds.failLimit) +
                           " search failures (the bounds may be too tight)");
    }
    throw ShapeError(ShapeError::Kind::Infeasible,
                     "no shapes satisfy the operators' rules within the bounds (infeasible)");
  }
  const Layout& layout = found->layout();
  ShapeSolution s;
  for (const auto& t : layout.tensors) {
    const int rank = found->value(t.rank);
    std::vector<int> shape;
    for (int i = R - rank; i < R; ++i) shape.push_back(found->value(t.dims[i]));
    s.shapes.push_back(std::move(shape));
  }
  for (const auto& nodeParams : layout.params) {
    std::map<std::string, int> values;
    for (const auto& [name, index] : nodeParams) {
      const int v = found->value(index);
      values[name] = name == "dim" || name == "dim1" ? v - R : v;
    }
    s.params.push_back(std::move(values));
  }
  s.flops = found->value(layout.flops);
  s.bytes = found->value(layout.bytes);
  s.failures = stats.fail;
  s.restarts = stats.restart;
  return s;
}

}  // namespace crucible::task_synth
