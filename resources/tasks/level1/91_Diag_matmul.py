import torch
import torch.nn as nn


class Model(nn.Module):
    """Diagonal matrix times matrix: torch.diag(A) @ B, with A the diagonal as a vector of length
    N and B of shape (N, M); row n of B is scaled by A[n]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(A) @ B


N = 768
M = 640


def get_inputs():
    A = torch.randn(N)
    B = torch.randn(N, M)
    return [A, B]


def get_init_inputs():
    return []
