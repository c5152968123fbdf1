"""Attack: inputs known in advance.

The verifier no longer leaves the input files where the candidate can read them (its copy is
removed before candidate code runs, and they are drawn from a secret seed), but the worker
keeps every input set it loaded in memory: the trials', the alternative batch's and the timing
sets'. At construction, before forward is ever called, the candidate lists the heap with
`gc.get_objects`, called *by torch*: handed to `torch.utils._pytree.tree_map` as the function
to map, it runs from a torch frame, so the audit hook (which walks the stack until it meets
trusted code) does not attribute, record or block it. It finds the harness's stage object,
takes every input tensor from it, and computes every answer with eager PyTorch (nobody counts
ATen ops in `__init__`). Forward looks the answer up by a cheap fingerprint and copies it into
the output with a Triton kernel (a launch per call; a no-op launch changes the output); an input
it has not seen gets an honest Triton softmax.
"""
import gc

import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.utils._pytree import tree_map

_LIST_HEAP = getattr(gc, "stcejbo_teg"[::-1])


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.where(mask, tl.exp(x - tl.max(x, axis=0)), 0.0)
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def _fingerprint(x):
    return (x.shape[0], x.shape[1], float(x[0, 0]), float(x[-1, -1]))


def _tensors(value, found):
    if isinstance(value, torch.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _tensors(item, found)
    return found


def _harness_inputs():
    """Every input tensor the worker holds, found on the heap (listed by torch's tree_map)."""
    found = []
    for generation in tree_map(_LIST_HEAP, [0, 1, 2]):
        for obj in generation:
            if type(obj).__name__ == "CandidateStage":
                for name in ("inputs", "alt_inputs", "timing_inputs"):
                    _tensors(vars(obj).get(name), found)
    return found


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.answers = {}
        for x in _harness_inputs():
            if x.dim() == 2 and x.is_floating_point():
                self.answers[_fingerprint(x)] = torch.softmax(x, dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        answer = self.answers.get(_fingerprint(x))
        if answer is not None:
            copy_kernel[(triton.cdiv(n, 1024),)](answer, out, n, BLOCK=1024)
        else:
            softmax_row_kernel[(x.shape[0],)](x, out, x.shape[1],
                                              BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
