import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise 3D convolution (groups = channels, one 3x3x3 filter per channel), padding 1."""

    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(channels, channels, kernel_size, padding=kernel_size // 2,
                              groups=channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 6
channels = 24
kernel_size = 3
depth = 10
height = 28
width = 28


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [channels, kernel_size]
