import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise Mish: x * tanh(softplus(x))."""

    def __init__(self):
        super().__init__()
        self.act = nn.Mish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x)


batch_size = 16
dim = 50000


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
