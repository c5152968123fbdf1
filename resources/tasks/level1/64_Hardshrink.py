import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Elementwise hard shrinkage: x where |x| > lambd, 0 elsewhere (lambd 0.5)."""

    def __init__(self, lambd):
        super().__init__()
        self.lambd = lambd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardshrink(x, lambd=self.lambd)


batch_size = 16
dim = 32768
lambd = 0.5


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [lambd]
