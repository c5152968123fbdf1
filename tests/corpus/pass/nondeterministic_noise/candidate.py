import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["seed"])
def noisy_add_kernel(a_ptr, b_ptr, out_ptr, n_elements, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    # A stand-in for a racy kernel: +-0.9e-4 per element, a different draw every call. Each
    # run stays within the fp32 tolerance (1e-4 + 1e-4 * |y|) of the true sum, but two runs
    # on the same inputs differ by 1.8e-4 on about half of the elements.
    r = tl.rand(seed, offs)
    noise = tl.where(r < 0.5, -0.9e-4, 0.9e-4)
    tl.store(out_ptr + offs, a + b + noise, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        a = a.contiguous()
        b = b.contiguous()
        out = torch.empty_like(a)
        n = out.numel()
        BLOCK = 1024
        noisy_add_kernel[(triton.cdiv(n, BLOCK),)](a, b, out, n, 1000 + self.calls, BLOCK=BLOCK)
        return out
