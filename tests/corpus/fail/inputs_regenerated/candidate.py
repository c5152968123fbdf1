"""Inputs regenerated from the documented seed (plain form).

At construction the candidate replays the harness's documented input recipe
(torch.manual_seed(42 + 1 + k), then torch.randn with the reference's 16 x 128 shape, for the
trials k = 0..4) and precomputes every answer with eager `torch.softmax`. forward looks the input
up by a cheap fingerprint (shape and two elements) and returns the stored answer through a Triton
copy kernel. When the lookup misses, the fallback is deliberately wrong (it copies the input
itself, unchanged, through the copy kernel), so the outcome shows whether the lookups hit: with a
secret per-run input seed they all miss and the candidate is simply incorrect. (The fallback
depends on the input on purpose: a constant one, such as zeros, is flagged
input_insensitive_output, which would hide whether any lookup hit.)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH, DIM = 16, 128


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _fingerprint(x):
    return (tuple(x.shape), round(float(x[0, 0]), 5), round(float(x[-1, -1]), 5))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.answers = {}
        for k in range(5):
            torch.manual_seed(42 + 1 + k)
            x = torch.randn(BATCH, DIM)
            self.answers[_fingerprint(x)] = torch.softmax(x, dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        hit = self.answers.get(_fingerprint(x))
        src = hit.to(x.device) if hit is not None else x  # miss: wrong on purpose
        out = torch.empty_like(x)
        n = out.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](src, out, n, BLOCK=1024)
        return out
