import torch
import torch.nn as nn


class Model(nn.Module):
    """Pointwise 3D convolution: a 1x1x1 kernel mixing 32 channels into 48 at every voxel, no
    bias."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 4
in_channels = 32
out_channels = 48
depth = 8
height = 20
width = 22


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
