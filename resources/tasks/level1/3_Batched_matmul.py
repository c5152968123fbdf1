import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix product: C[i] = A[i] @ B[i] for every i in the batch (torch.bmm)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch_size = 32
m = 192
k = 160
n = 224


def get_inputs():
    A = torch.randn(batch_size, m, k)
    B = torch.randn(batch_size, k, n)
    return [A, B]


def get_init_inputs():
    return []
