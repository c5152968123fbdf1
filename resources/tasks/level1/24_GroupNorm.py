import torch
import torch.nn as nn


class Model(nn.Module):
    """Group normalisation (nn.GroupNorm): channels split into groups, each group normalised
    over its channels and spatial positions, then a per-channel affine transform."""

    def __init__(self, num_groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


batch_size = 8
num_groups = 8
channels = 64
height = 32
width = 32


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [num_groups, channels]
