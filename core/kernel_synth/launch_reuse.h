#pragma once
// Lighter launches for a candidate's kernels: a helper that launches through the compiled kernel
// Triton made for an earlier launch of the same specialisation, and the lines that route each
// kernel forward launches through it. Internal to core/kernel_synth.

#include <string>

namespace crucible::kernel_synth {

/// The candidate's `_Reused` class and `_launch_facts` helper (Python, module level).
extern const char* const kReusedLaunch;

/// `name = _Reused(name)` for each `@triton.jit` kernel in `kernels` that `body` (forward's
/// lines) launches as `name[...]`, in the order the kernels are defined; kernels called only from
/// other kernels stay as they are.
std::string reuseLaunchedKernels(const std::string& kernels, const std::string& body);

}  // namespace crucible::kernel_synth
