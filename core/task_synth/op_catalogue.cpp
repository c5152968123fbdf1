#include "core/task_synth/op_catalogue.h"

#include <algorithm>
#include <array>

namespace crucible::task_synth {

namespace {

using R = ShapeRule;

// One row per operator. Operators whose domain is not all reals (log, sqrt, acos ...) are left
// out: synthetic inputs are torch.randn, and every value a program produces may feed any later
// operator. Losses use reduction='none' so their outputs keep a shape (a scalar is degenerate).
constexpr std::array kCatalogue = {
    // Pointwise unary.
    OpSpec{"abs", "torch.abs({0})", 1, R::Same},
    OpSpec{"neg", "torch.neg({0})", 1, R::Same},
    OpSpec{"exp", "torch.exp({0})", 1, R::Same, 1, kMaxRank, 4},
    OpSpec{"sin", "torch.sin({0})", 1, R::Same, 1, kMaxRank, 4},
    OpSpec{"cos", "torch.cos({0})", 1, R::Same, 1, kMaxRank, 4},
    OpSpec{"tanh", "torch.tanh({0})", 1, R::Same, 1, kMaxRank, 4},
    OpSpec{"sigmoid", "torch.sigmoid({0})", 1, R::Same, 1, kMaxRank, 4},
    OpSpec{"erf", "torch.erf({0})", 1, R::Same, 1, kMaxRank, 4},
    OpSpec{"atan", "torch.atan({0})", 1, R::Same, 1, kMaxRank, 4},
    OpSpec{"square", "torch.square({0})", 1, R::Same},
    OpSpec{"reciprocal", "torch.reciprocal({0})", 1, R::Same},
    OpSpec{"clamp", "torch.clamp({0}, min=-0.5, max=0.5)", 1, R::Same, 1, kMaxRank, 2},
    // Activations.
    OpSpec{"relu", "F.relu({0})", 1, R::Same},
    OpSpec{"leaky_relu", "F.leaky_relu({0}, negative_slope=0.1)", 1, R::Same, 1, kMaxRank, 2},
    OpSpec{"gelu", "F.gelu({0})", 1, R::Same, 1, kMaxRank, 8},
    OpSpec{"silu", "F.silu({0})", 1, R::Same, 1, kMaxRank, 5},
    OpSpec{"elu", "F.elu({0})", 1, R::Same, 1, kMaxRank, 5},
    OpSpec{"selu", "F.selu({0})", 1, R::Same, 1, kMaxRank, 5},
    OpSpec{"celu", "F.celu({0}, alpha=0.5)", 1, R::Same, 1, kMaxRank, 5},
    OpSpec{"softplus", "F.softplus({0})", 1, R::Same, 1, kMaxRank, 6},
    OpSpec{"softsign", "F.softsign({0})", 1, R::Same, 1, kMaxRank, 3},
    OpSpec{"mish", "F.mish({0})", 1, R::Same, 1, kMaxRank, 10},
    OpSpec{"hardtanh", "F.hardtanh({0})", 1, R::Same, 1, kMaxRank, 2},
    OpSpec{"hardsigmoid", "F.hardsigmoid({0})", 1, R::Same, 1, kMaxRank, 3},
    OpSpec{"hardswish", "F.hardswish({0})", 1, R::Same, 1, kMaxRank, 4},
    OpSpec{"relu6", "F.relu6({0})", 1, R::Same, 1, kMaxRank, 2},
    OpSpec{"logsigmoid", "F.logsigmoid({0})", 1, R::Same, 1, kMaxRank, 6},
    // Pointwise with broadcasting.
    OpSpec{"add", "torch.add({0}, {1})", 2, R::Broadcast},
    OpSpec{"sub", "torch.sub({0}, {1})", 2, R::Broadcast},
    OpSpec{"mul", "torch.mul({0}, {1})", 2, R::Broadcast},
    OpSpec{"div", "torch.div({0}, {1})", 2, R::Broadcast},
    OpSpec{"maximum", "torch.maximum({0}, {1})", 2, R::Broadcast},
    OpSpec{"minimum", "torch.minimum({0}, {1})", 2, R::Broadcast},
    OpSpec{"atan2", "torch.atan2({0}, {1})", 2, R::Broadcast, 1, kMaxRank, 4},
    OpSpec{"lerp", "torch.lerp({0}, {1}, {2})", 3, R::Broadcast, 1, kMaxRank, 3},
    OpSpec{"addcmul", "torch.addcmul({0}, {1}, {2}, value=0.5)", 3, R::Broadcast, 1, kMaxRank, 3},
    // Reductions over one dim.
    OpSpec{"sum", "torch.sum({0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1, kMaxRank, 1, 2},
    OpSpec{"mean", "torch.mean({0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1, kMaxRank, 1,
           2},
    OpSpec{"amax", "torch.amax({0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1, kMaxRank, 1,
           2},
    OpSpec{"amin", "torch.amin({0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1, kMaxRank, 1,
           2},
    // var/std cost far more than their arithmetic on CPU when the reduced dim is short and not
    // the innermost (two passes, strided): counted as 16 FLOPs per element.
    OpSpec{"var", "torch.var({0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1, kMaxRank, 16, 2},
    OpSpec{"std", "torch.std({0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1, kMaxRank, 16, 2},
    OpSpec{"vector_norm", "torch.linalg.vector_norm({0}, dim={dim}, keepdim={keepdim})", 1,
           R::Reduce, 1, kMaxRank, 2, 2},
    OpSpec{"logsumexp", "torch.logsumexp({0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1,
           kMaxRank, 5, 2},
    OpSpec{"argmax", "torch.argmax({0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1, kMaxRank,
           1, 2, DtypeRule::Index},
    OpSpec{"argmin", "torch.argmin({0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1, kMaxRank,
           1, 2, DtypeRule::Index},
    // Along one dim, shape kept.
    OpSpec{"cumsum", "torch.cumsum({0}, dim={dim})", 1, R::SameAlongDim, 1, kMaxRank, 1, 2},
    OpSpec{"softmax", "F.softmax({0}, dim={dim})", 1, R::SameAlongDim, 1, kMaxRank, 5, 2},
    OpSpec{"log_softmax", "F.log_softmax({0}, dim={dim})", 1, R::SameAlongDim, 1, kMaxRank, 5, 2},
    OpSpec{"normalize", "F.normalize({0}, dim={dim})", 1, R::SameAlongDim, 1, kMaxRank, 4, 2},
    OpSpec{"flip", "torch.flip({0}, dims=({dim},))", 1, R::SameAlongDim, 1, kMaxRank, 1, 2},
    OpSpec{"cosine_similarity", "F.cosine_similarity({0}, {1}, dim={dim})", 2, R::BroadcastReduce,
           1, kMaxRank, 6, 2},
    // Normalisations.
    OpSpec{"layer_norm", "F.layer_norm({0}, {0}.shape[-1:])", 1, R::SameLastDim, 1, kMaxRank, 8, 2},
    OpSpec{"rms_norm", "F.rms_norm({0}, {0}.shape[-1:])", 1, R::SameLastDim, 1, kMaxRank, 5, 2},
    OpSpec{"group_norm", "F.group_norm({0}, {groups})", 1, R::GroupNorm, 2, kMaxRank, 8},
    OpSpec{"batch_norm", "F.batch_norm({0}, None, None, training=True)", 1, R::BatchNorm, 2,
           kMaxRank, 8},
    OpSpec{"instance_norm", "F.instance_norm({0})", 1, R::InstanceNorm, 3, kMaxRank, 8},
    // Matrix products.
    OpSpec{"matmul", "torch.matmul({0}, {1})", 2, R::Matmul, 2, 2},
    OpSpec{"bmm", "torch.bmm({0}, {1})", 2, R::Bmm, 3, 3},
    OpSpec{"linear", "self.{module}({0})", 1, R::Linear},
    // Convolutions and pooling.
    OpSpec{"conv1d", "self.{module}({0})", 1, R::Conv, 3, 3, 2, 1, DtypeRule::Float, 1},
    OpSpec{"conv2d", "self.{module}({0})", 1, R::Conv, 4, 4, 2, 1, DtypeRule::Float, 2},
    OpSpec{"max_pool1d", "F.max_pool1d({0}, kernel_size={kernel}, stride={stride}, padding={pad})",
           1, R::Pool, 3, 3, 1, 1, DtypeRule::Float, 1},
    OpSpec{"avg_pool1d", "F.avg_pool1d({0}, kernel_size={kernel}, stride={stride}, padding={pad})",
           1, R::Pool, 3, 3, 1, 1, DtypeRule::Float, 1},
    OpSpec{"max_pool2d", "F.max_pool2d({0}, kernel_size={kernel}, stride={stride}, padding={pad})",
           1, R::Pool, 4, 4, 1, 1, DtypeRule::Float, 2},
    OpSpec{"avg_pool2d", "F.avg_pool2d({0}, kernel_size={kernel}, stride={stride}, padding={pad})",
           1, R::Pool, 4, 4, 1, 1, DtypeRule::Float, 2},
    OpSpec{"adaptive_avg_pool2d", "F.adaptive_avg_pool2d({0}, ({height}, {width}))", 1,
           R::AdaptivePool, 4, 4},
    // Layout.
    OpSpec{"transpose", "torch.transpose({0}, {dim}, {dim1})", 1, R::Transpose, 2},
    OpSpec{"cat", "torch.cat([{0}, {1}], dim={dim})", 2, R::Cat},
    OpSpec{"flatten", "torch.flatten({0}, start_dim=-2)", 1, R::Flatten, 2},
    OpSpec{"tril", "torch.tril({0})", 1, R::Same, 2},
    OpSpec{"triu", "torch.triu({0})", 1, R::Same, 2},
    // Elementwise losses (reduction='none').
    OpSpec{"mse_loss", "F.mse_loss({0}, {1}, reduction='none')", 2, R::Equal, 1, kMaxRank, 2},
    OpSpec{"l1_loss", "F.l1_loss({0}, {1}, reduction='none')", 2, R::Equal, 1, kMaxRank, 2},
    OpSpec{"smooth_l1_loss", "F.smooth_l1_loss({0}, {1}, reduction='none')", 2, R::Equal, 1,
           kMaxRank, 4},
    OpSpec{"huber_loss", "F.huber_loss({0}, {1}, reduction='none', delta=0.5)", 2, R::Equal, 1,
           kMaxRank, 4},
    OpSpec{"binary_cross_entropy_with_logits",
           "F.binary_cross_entropy_with_logits({0}, torch.sigmoid({1}), reduction='none')", 2,
           R::Equal, 1, kMaxRank, 8},
    // Appended after the first catalogue, so that its seeds keep their programs. Products run
    // over factors near 1, which neither vanish nor overflow along a dim.
    OpSpec{"tanhshrink", "F.tanhshrink({0})", 1, R::Same, 1, kMaxRank, 5},
    OpSpec{"hardshrink", "F.hardshrink({0}, lambd=0.25)", 1, R::Same, 1, kMaxRank, 2},
    OpSpec{"softshrink", "F.softshrink({0}, lambd=0.25)", 1, R::Same, 1, kMaxRank, 2},
    OpSpec{"where", "torch.where({0} > 0, {0}, {1})", 2, R::Broadcast, 1, kMaxRank, 2},
    OpSpec{"prod", "torch.prod(1.0 + 0.05 * {0}, dim={dim}, keepdim={keepdim})", 1, R::Reduce, 1,
           kMaxRank, 3, 2},
    OpSpec{"cumprod", "torch.cumprod(1.0 + 0.05 * {0}, dim={dim})", 1, R::SameAlongDim, 1, kMaxRank,
           3, 2},
};

}  // namespace

std::span<const OpSpec> catalogue() {
  return kCatalogue;
}

const OpSpec* findOp(std::string_view name) {
  const auto it = std::find_if(kCatalogue.begin(), kCatalogue.end(),
                               [&](const OpSpec& op) { return op.name == name; });
  return it == kCatalogue.end() ? nullptr : &*it;
}

bool hasDimArgument(ShapeRule rule) {
  return rule == R::SameAlongDim || rule == R::Reduce || rule == R::BroadcastReduce ||
         rule == R::Transpose || rule == R::Cat;
}

bool hasModule(ShapeRule rule) {
  return rule == R::Linear || rule == R::Conv;
}

RankRange RankRange::intersect(RankRange o) const {
  return {std::max(lo, o.lo), std::min(hi, o.hi)};
}

RankRange outputRanks(const OpSpec& op, RankRange in) {
  in = in.intersect({op.minRank, op.maxRank});
  if (in.empty()) return in;
  switch (op.rule) {
    case R::Reduce:
      return {std::max(1, in.lo - 1), in.hi};
    case R::BroadcastReduce:
    case R::Flatten:
      return RankRange{in.lo - 1, in.hi - 1}.intersect({1, kMaxRank});
    case R::Matmul:
      return {2, 2};
    case R::Bmm:
      return {3, 3};
    default:
      return in;
  }
}

}  // namespace crucible::task_synth
