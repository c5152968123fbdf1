import torch
import torch.nn as nn


class Model(nn.Module):
    """Product of two lower-triangular N x N matrices, with the result's lower triangle kept:
    torch.tril(A @ B)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A, B))


N = 640


def get_inputs():
    A = torch.tril(torch.randn(N, N))
    B = torch.tril(torch.randn(N, N))
    return [A, B]


def get_init_inputs():
    return []
