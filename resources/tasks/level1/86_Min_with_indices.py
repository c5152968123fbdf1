import torch
import torch.nn as nn


class Model(nn.Module):
    """Minimum over one dimension (given at construction) returning both the values and their
    int64 indices (x.min(dim))."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor):
        result = x.min(dim=self.dim)
        return result.values, result.indices


batch_size = 32
dim1 = 500
dim2 = 160
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
