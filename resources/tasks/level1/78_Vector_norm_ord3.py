import torch
import torch.nn as nn


class Model(nn.Module):
    """Vector 3-norm over one dimension (given at construction):
    torch.linalg.vector_norm(x, ord=3, dim=dim) = (sum |x|^3)^(1/3)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x, ord=3, dim=self.dim)


batch_size = 64
dim1 = 77
dim2 = 300
reduce_dim = 2


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
