#pragma once
// --shrink F: GPU-sized tasks (KernelBench's own shapes) made small enough for a CPU by scaling
// their module-level size constants, so a laptop can run a GPU benchmark's tasks; every output of
// such a run says it was shrunk, because its times say nothing about the original sizes.
//
// A size constant is a top-level `name = <integer>` or `name = (<integers>)` line (KernelBench
// sets every shape that way: `batch_size = 16`, `dim = 16384`, `x0_shape = (8, 64)`). Each
// integer above 8 is multiplied by F and rounded to a multiple of the largest power of two that
// divides it and is not above the scaled value, so channel counts stay divisible by their groups
// and heads. Names that are not sizes are left alone: anything naming a kernel, stride, padding,
// dilation, groups, heads, eps, seed, layers or steps. Expressions (`hidden = dim * 4`) follow
// the constants they use. Shapes written as literals inside get_inputs() are not changed.

#include <stdexcept>
#include <string>
#include <vector>

namespace crucible::bench {

struct ShrunkConstant {
  std::string name;
  int line = 0;               // 1-based
  std::string before, after;  // the value as written
  bool operator==(const ShrunkConstant&) const = default;
};

struct ShrinkResult {
  std::string source;  // the whole file, marked as shrunk in a comment on its first line
  std::vector<ShrunkConstant> changed;
};

/// Scales `source`'s size constants by `factor`, in (0, 1]; throws std::invalid_argument
/// otherwise.
ShrinkResult shrinkSource(const std::string& source, double factor);

/// One integer scaled as described above (exposed for tests).
long long shrinkSize(long long value, double factor);

}  // namespace crucible::bench
