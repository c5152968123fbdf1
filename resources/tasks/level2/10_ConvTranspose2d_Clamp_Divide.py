import torch
import torch.nn as nn


class Model(nn.Module):
    """y = clamp(conv_transpose2d(x), min=min_value) / divisor."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, min_value, divisor):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding)
        self.min_value = min_value
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_t(x)
        x = torch.clamp(x, min=self.min_value)
        return x / self.divisor


batch_size = 8
in_channels = 32
out_channels = 16
kernel_size = 3
stride = 2
padding = 1
min_value = -0.2
divisor = 3.0
height = 32
width = 32


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, min_value, divisor]
