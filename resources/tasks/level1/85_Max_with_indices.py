import torch
import torch.nn as nn


class Model(nn.Module):
    """Maximum over one dimension (given at construction) returning both the values and their
    int64 indices, as torch.max(x, dim) does."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor):
        values, indices = torch.max(x, dim=self.dim)
        return values, indices


batch_size = 20
dim1 = 333
dim2 = 257
reduce_dim = 2


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
