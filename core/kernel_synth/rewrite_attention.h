#pragma once
// Attention written in the ops the lowerers take (graph_rewrite's attention part):
// F.scaled_dot_product_attention as q k^T, its scale and mask (causal: -inf above the diagonal),
// a softmax and the product with v; nn.MultiheadAttention as its input projections (slices of
// in_proj_weight), the heads as views, that attention per head and the output projection. A
// boolean mask keeps what is true for SDPA and masks what is true for nn.MultiheadAttention, as
// torch has it.
// Internal to core/kernel_synth.

#include "core/kernel_synth/graph_builder.h"

namespace crucible::kernel_synth {

/// False (the caller drops what was written) where the node's form is not covered: dropout,
/// unbatched inputs, heads that do not divide the embedding.
bool rewriteAttention(GraphBuilder& b, const OpNode& n);
bool rewriteMultiHeadAttention(GraphBuilder& b, const OpNode& n);

}  // namespace crucible::kernel_synth
