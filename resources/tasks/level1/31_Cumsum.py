import torch
import torch.nn as nn


class Model(nn.Module):
    """Inclusive prefix sum (torch.cumsum) along one dimension (given at construction)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


batch_size = 128
length = 4096
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, length)
    return [x]


def get_init_inputs():
    return [reduce_dim]
