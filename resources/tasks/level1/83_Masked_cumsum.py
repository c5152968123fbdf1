import torch
import torch.nn as nn


class Model(nn.Module):
    """Masked prefix sum: cumsum along one dimension of x where the boolean mask is set, with
    masked-out positions contributing zero (torch.cumsum(x * mask, dim))."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 128
length = 2500
scan_dim = 1


def get_inputs():
    x = torch.randn(batch_size, length)
    mask = torch.rand(batch_size, length) > 0.5
    return [x, mask]


def get_init_inputs():
    return [scan_dim]
