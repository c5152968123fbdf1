import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * row_stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.dim != 1 or x.dim() != 2:
            raise NotImplementedError("this kernel reduces dimension 1 of a 2-D tensor")
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty((n_rows, 1), device=x.device, dtype=x.dtype)
        row_sum_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=128)
        return y
