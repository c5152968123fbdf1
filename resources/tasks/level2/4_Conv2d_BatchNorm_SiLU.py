import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y = silu(batch_norm(conv2d(x))). The module stays in training mode, as KernelBench
    models do, so batch normalisation uses the statistics of the current batch."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.bn(x)
        return F.silu(x)


batch_size = 8
in_channels = 16
out_channels = 32
kernel_size = 3
height = 48
width = 48


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
