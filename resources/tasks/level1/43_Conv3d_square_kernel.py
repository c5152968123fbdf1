import torch
import torch.nn as nn


class Model(nn.Module):
    """3D convolution (nn.Conv3d) with a cubic 3x3x3 kernel, stride 1, padding 1 and bias, over a
    batch of volumes."""

    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 4
in_channels = 6
out_channels = 20
kernel_size = 3
padding = 1
depth = 12
height = 30
width = 26


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
