"""Pointer blocks carried through loops (test_tcl_differential.py): advanced by scalars (compiled
as base + a carried offset), by blocks (the compiler falls back to carrying the whole block),
twice per iteration, and used after the loop."""

import torch
import triton
import triton.language as tl


@triton.jit
def strided_sum_kernel(x, out, n_cols, STEPS: tl.constexpr, BLOCK: tl.constexpr, MODE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    p = x + row * n_cols + cols
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, STEPS):
        acc += tl.load(p, mask=cols + i * BLOCK < n_cols, other=0.0)
        if MODE == "scalar":
            p += BLOCK
        elif MODE == "twice":
            p += BLOCK // 2
            p += BLOCK - BLOCK // 2
        else:  # a block step: every lane advances by BLOCK, written as a block
            p += tl.full((BLOCK,), BLOCK, tl.int32)
    # after the loop p points STEPS blocks further on
    tail = tl.load(p - BLOCK, mask=cols + (STEPS - 1) * BLOCK < n_cols, other=0.0)
    tl.store(out + row * BLOCK + cols, acc + 0.5 * tail)


def _inputs():
    g = torch.Generator().manual_seed(5)
    return torch.randn(7, 100, generator=g)


def run():
    x = _inputs()
    out = {}
    for mode in ("scalar", "twice", "block"):
        o = torch.empty(7, 32)
        strided_sum_kernel[(7,)](x, o, 100, STEPS=4, BLOCK=32, MODE=mode)
        out[mode] = o
    return out


def expected():
    x = torch.nn.functional.pad(_inputs(), (0, 28))  # 128 = 4 blocks of 32
    blocks = x.view(7, 4, 32)
    r = blocks.sum(1) + 0.5 * blocks[:, 3]
    return {mode: r for mode in ("scalar", "twice", "block")}
