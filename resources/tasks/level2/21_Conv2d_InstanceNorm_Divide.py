import torch
import torch.nn as nn


class Model(nn.Module):
    """y = instance_norm(conv2d(x)) / divide_by."""

    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.norm(x)
        return x / self.divide_by


batch_size = 8
in_channels = 16
out_channels = 32
kernel_size = 3
divide_by = 2.0
height = 64
width = 64


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divide_by]
