import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-vector product: y (M x 1) = A (M x K) @ x (K x 1)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, x)


M = 16384
K = 1024


def get_inputs():
    A = torch.randn(M, K)
    x = torch.randn(K, 1)
    return [A, x]


def get_init_inputs():
    return []
