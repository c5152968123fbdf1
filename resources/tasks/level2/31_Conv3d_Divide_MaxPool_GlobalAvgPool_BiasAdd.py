import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv3d, division by a constant, 3D max pooling, global average pooling over the
    volume (dims 2, 3, 4), then a learnable per-channel bias: one value per (sample, channel)."""

    def __init__(self, in_channels, out_channels, kernel_size, divisor, pool_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.divisor = divisor
        self.max_pool = nn.MaxPool3d(pool_size)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x / self.divisor
        x = self.max_pool(x)
        x = x.mean(dim=(2, 3, 4))
        return x + self.bias


batch_size = 16
in_channels = 3
out_channels = 32
kernel_size = 3
divisor = 2.0
pool_size = 2
depth = 10
height = 18
width = 18


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divisor, pool_size]
