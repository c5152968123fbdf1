#pragma once
// The tilings the synthesizer proposes for a backend, best guess first: one candidate per entry,
// so the search (best-of-n in core/generate) verifies each and keeps the fastest.

#include <string>
#include <vector>

#include "core/kernel_synth/lowering.h"
#include "core/kernel_synth/partition.h"

namespace crucible::kernel_synth {

/// Options per group kind, best first for the backend: the interpreter pays per program, so it
/// gets few large programs; PoCL runs one program per work-item, so blocks stay small enough to
/// fill the cores; GPUs get tensor-core products (tf32x3 beside exact ieee), implicit-GEMM
/// convolutions and shapes that fill the machine.
struct TileMenu {
  std::vector<Tiling> pointwise, row, matmul, conv;
};
TileMenu menuFor(const std::string& backend);

/// Up to `count` distinct tile sets for the groups of `p`: candidate i takes entry i of each
/// kind's list (wrapping), and sets that differ only in kinds `p` lacks count once.
std::vector<TileSet> tileSetsFor(const OpGraph& g, const Partition& p, const std::string& backend,
                                 int count);

/// A short label naming the tiling of each kind of group in `p`.
std::string tileLabel(const OpGraph& g, const Partition& p, const TileSet& tiles);

}  // namespace crucible::kernel_synth
