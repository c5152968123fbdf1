import torch
import torch.nn as nn


class Model(nn.Module):
    """2D convolution with an asymmetric (3, 5) kernel, stride 2, padding (1, 2) and no bias,
    applied to a non-square image."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 8
in_channels = 24
out_channels = 48
kernel_size = (3, 5)
stride = 2
padding = (1, 2)
height = 96
width = 128


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
