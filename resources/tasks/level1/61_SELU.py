import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise SELU: scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with the standard
    constants alpha = 1.6733, scale = 1.0507."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


batch_size = 8
channels = 64
length = 2000


def get_inputs():
    x = torch.randn(batch_size, channels, length)
    return [x]


def get_init_inputs():
    return []
