import torch
import torch.nn as nn


class Model(nn.Module):
    """y[b, h, w] = sum over c of tanh(conv2d(x))[b, c, h, w] * scale."""

    def __init__(self, in_channels, out_channels, kernel_size, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.tanh(x) * self.scale
        return x.sum(dim=1)


batch_size = 8
in_channels = 16
out_channels = 32
kernel_size = 3
scale = 0.5
height = 64
width = 64


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale]
