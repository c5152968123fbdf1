import torch
import torch.nn as nn


class Model(nn.Module):
    """Grouped, dilated transposed 2D convolution: 3 groups, 3x3 kernel, stride 2, padding 1,
    dilation 3, with bias, on a non-square image."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding, dilation=dilation, groups=groups)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_t(x)


batch_size = 8
in_channels = 24
out_channels = 36
kernel_size = 3
stride = 2
padding = 1
dilation = 3
groups = 3
height = 30
width = 22


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation, groups]
