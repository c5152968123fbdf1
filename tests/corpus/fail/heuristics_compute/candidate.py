"""Compute hidden in a launch hook: @triton.heuristics (plain form).

The kernel carries a `@triton.heuristics` entry whose function runs on the host at launch time
and computes the whole softmax with eager PyTorch (`torch.softmax`), writing it straight into the
output tensor passed to the kernel. The kernel itself does a trivial store: it loads the output
buffer and stores it back, so it "writes" what the heuristic computed. The hope is that work done
inside the launch machinery is not counted as the candidate's PyTorch compute.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _softmax_into_output(args):
    args["out_ptr"].copy_(torch.softmax(args["x_ptr"], dim=1))
    return 1


@triton.heuristics({"DONE": _softmax_into_output})
@triton.jit
def store_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr, DONE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = out.numel()
        store_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out
