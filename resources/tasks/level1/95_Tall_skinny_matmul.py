import torch
import torch.nn as nn


class Model(nn.Module):
    """Tall-skinny matrix product: C = A @ B with A (M, K) having many rows and few columns and
    B a small (K, N) matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 16384
K = 64
N = 48


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
