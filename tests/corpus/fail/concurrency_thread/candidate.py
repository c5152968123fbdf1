import threading

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        out = torch.empty_like(a)
        n = out.numel()
        # The launch happens on another thread (thread injection). This one joins before
        # returning so the values are right; the real attack returns before the thread ends so
        # a timer stopped at return misses the work.
        worker = threading.Thread(
            target=lambda: add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024))
        worker.start()
        worker.join()
        return out
