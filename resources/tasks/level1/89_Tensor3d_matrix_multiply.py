import torch
import torch.nn as nn


class Model(nn.Module):
    """3D tensor times matrix: torch.matmul of A (b, dim_i, dim_j) with B (dim_j, dim_k), giving (b, dim_i, dim_k); the
    matrix is broadcast over the batch."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


batch_size = 16
dim_i = 300
dim_j = 192
dim_k = 250


def get_inputs():
    A = torch.randn(batch_size, dim_i, dim_j)
    B = torch.randn(dim_j, dim_k)
    return [A, B]


def get_init_inputs():
    return []
