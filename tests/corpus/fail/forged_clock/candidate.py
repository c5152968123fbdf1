"""Forged harness clock (plain form).

The kernel is an honest Triton softmax, but at construction the candidate imports the worker's
timing module (`crucible_worker.timing`) and replaces the clock it reads, `_perf_counter_ns`,
with one that runs 40x slow, so every interval the harness measures looks 40x shorter and the
reported time is far below the real one.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        import crucible_worker.timing as t
        real_clock = t._perf_counter_ns
        t._perf_counter_ns = lambda: real_clock() // 40

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        softmax_kernel[(rows,)](x, out, cols, BLOCK=triton.next_power_of_2(cols))
        return out
