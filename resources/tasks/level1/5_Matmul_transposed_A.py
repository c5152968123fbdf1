import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix product with a transposed left operand: C (M x N) = A.T @ B, A given as (K x M)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


M = 1024
K = 512
N = 768


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
