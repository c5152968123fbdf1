import torch
import torch.nn as nn


class Model(nn.Module):
    """4D tensor times matrix over the last index, torch.einsum("bijl,lk->bijk", A, B):
    A (b, dim_i, dim_j, dim_l) and B (dim_l, dim_k) give (b, dim_i, dim_j, dim_k)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", A, B)


batch_size = 7
dim_i = 24
dim_j = 40
dim_l = 96
dim_k = 120


def get_inputs():
    A = torch.randn(batch_size, dim_i, dim_j, dim_l)
    B = torch.randn(dim_l, dim_k)
    return [A, B]


def get_init_inputs():
    return []
