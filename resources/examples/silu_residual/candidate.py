"""An honest Triton candidate for silu_residual: the whole chain in one pass over the elements."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def silu_residual_kernel(x_ptr, r_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    r = tl.load(r_ptr + offs, mask=mask)
    y = x * tl.sigmoid(x) * scale + r
    y = tl.minimum(tl.maximum(y, -3.0), 3.0)
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float = 0.5):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 4096
        silu_residual_kernel[(triton.cdiv(n, BLOCK),)](x, residual, out, n, self.scale, BLOCK=BLOCK)
        return out
