import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum over dimensions 1 and 2 of a 4D tensor: (N, A, B, C) to (N, C)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=(1, 2))


batch_size = 64
dim1 = 48
dim2 = 30
dim3 = 40


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2, dim3)
    return [x]


def get_init_inputs():
    return []
