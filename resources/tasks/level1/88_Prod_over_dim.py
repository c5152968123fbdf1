import torch
import torch.nn as nn


class Model(nn.Module):
    """Product over one dimension (given at construction). The inputs are drawn near 1 so the
    products stay in a moderate range."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)


batch_size = 32
dim1 = 256
dim2 = 200
reduce_dim = 1


def get_inputs():
    x = 1.0 + 0.02 * torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
