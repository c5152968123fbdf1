import torch
import torch.nn as nn


class Model(nn.Module):
    """Reverse (suffix) cumulative sum along one dimension: out[i] = sum of x[j] for j >= i,
    written as flip, cumsum, flip."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flip(self.dim).cumsum(self.dim).flip(self.dim)


batch_size = 128
length = 3000
scan_dim = 1


def get_inputs():
    x = torch.randn(batch_size, length)
    return [x]


def get_init_inputs():
    return [scan_dim]
