import torch
import torch.nn as nn


class Model(nn.Module):
    """Adaptive 3D average pooling from a 10 x 25 x 23 volume to 4 x 7 x 5 (the windows do not
    divide evenly, so neighbouring windows overlap or differ in size)."""

    def __init__(self, output_size):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool3d(output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 16
channels = 32
depth = 10
height = 25
width = 23
output_size = (4, 7, 5)


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [output_size]
