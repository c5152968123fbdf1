import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix product with a transposed right operand: C (M x N) = A @ B.T, B given as (N x K)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


M = 1024
K = 768
N = 512


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(N, K)
    return [A, B]


def get_init_inputs():
    return []
