#pragma once
// Rewrites of a traced graph into the ops the lowerers take, before it is partitioned:
// * a loss with a reduction ("mean", "sum", "batchmean") becomes its per-element loss and a
//   reduction over everything;
// * a norm (torch.norm, torch.linalg.vector_norm, x.norm, F.normalize) becomes the pointwise
//   work, the sum or maximum and the root it stands for;
// * F.scaled_dot_product_attention becomes q k^T, its scale, its mask (causal: -inf above the
//   diagonal), a softmax and the product with v; triplet margin, cosine embedding and hinge
//   embedding losses and F.pairwise_distance become pointwise ops, norms and a reduction;
// * torch.stack becomes views of its pieces with the new dim, and their concatenation;
// * a reduction whose rows would be longer than a row program holds in registers becomes nested
//   reductions over fewer dims each (a dim too long by itself is first cut in two by a view).
//   Sums, means, maxima, minima, products and logsumexp nest exactly: every stage reduces blocks of
//   equal size.
// Rewritten nodes keep the original's name, line and shape, so consumers and outputs are
// untouched; the nodes added before them take the name with a suffix.

#include <cstdint>

#include "core/kernel_synth/op_graph.h"

namespace crucible::kernel_synth {

/// The longest row a row program holds whole in registers; longer rows of a norm are cut into
/// parts (lower_row.cpp), those of other reductions are nested by rewriteForLowering.
constexpr std::int64_t kLongestWholeRow = 16384;

OpGraph rewriteForLowering(OpGraph graph);

}  // namespace crucible::kernel_synth
