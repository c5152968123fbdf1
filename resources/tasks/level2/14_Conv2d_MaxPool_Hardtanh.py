import torch
import torch.nn as nn


class Model(nn.Module):
    """y = hardtanh(max_pool2d(conv2d(x), 2), -0.5, 0.5)."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_size, min_val, max_val):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool2d(pool_size)
        self.act = nn.Hardtanh(min_val, max_val)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.pool(x)
        return self.act(x)


batch_size = 8
in_channels = 16
out_channels = 32
kernel_size = 3
pool_size = 2
min_val = -0.5
max_val = 0.5
height = 64
width = 64


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_size, min_val, max_val]
