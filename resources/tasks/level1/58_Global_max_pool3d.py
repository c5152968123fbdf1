import torch
import torch.nn as nn


class Model(nn.Module):
    """Global max pooling over a volume with torch.amax over the depth, height and width
    dimensions: (N, C, D, H, W) to (N, C)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=(2, 3, 4))


batch_size = 16
channels = 160
depth = 6
height = 14
width = 14


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return []
