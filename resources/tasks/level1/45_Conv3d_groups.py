import torch
import torch.nn as nn


class Model(nn.Module):
    """Grouped 3D convolution: 16 input channels and 32 output channels split into 4 groups,
    3x3x3 kernel, stride 1, no padding."""

    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, groups=groups)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 4
in_channels = 16
out_channels = 32
kernel_size = 3
groups = 4
depth = 12
height = 22
width = 26


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]
