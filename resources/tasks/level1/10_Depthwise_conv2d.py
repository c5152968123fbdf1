import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise 2D convolution: each channel convolved with its own 3x3 filter
    (nn.Conv2d with groups = channels), padding 1, with bias."""

    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2,
                              groups=channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 8
channels = 64
kernel_size = 3
height = 64
width = 64


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [channels, kernel_size]
