#pragma once
// --shrink F: GPU-sized tasks (KernelBench's own shapes) made small enough for a CPU by scaling
// their module-level size constants, so a laptop can run a GPU benchmark's tasks; every output of
// such a run says it was shrunk, because its times say nothing about the original sizes.
// --scale F (F > 1) is the same rewrite the other way: the bundled corpus is sized for a 2-core
// CPU, where a GPU only measures launch overhead, so a GPU run grows it to sizes a GPU notices.
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

/// The largest factor --scale takes: 16 makes a 4-D CPU-sized tensor 65536 times larger.
constexpr double kMaxScale = 16;

/// Scales `source`'s size constants by `factor`, in (0, kMaxScale]; throws std::invalid_argument
/// otherwise.
ShrinkResult shrinkSource(const std::string& source, double factor);

/// How outputs name a rescaled run: "shrunk" below 1, "scaled up" above.
std::string scaleWord(double factor);

/// One integer scaled as described above (exposed for tests).
long long shrinkSize(long long value, double factor);

}  // namespace crucible::bench
