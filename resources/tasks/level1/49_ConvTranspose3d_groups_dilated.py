import torch
import torch.nn as nn


class Model(nn.Module):
    """Grouped, dilated transposed 3D convolution: 4 groups, kernel 3, stride 1, padding 1,
    dilation 2, no bias."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups):
        super().__init__()
        self.conv_t = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding, dilation=dilation, groups=groups,
                                         bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_t(x)


batch_size = 3
in_channels = 16
out_channels = 24
kernel_size = 3
stride = 1
padding = 1
dilation = 2
groups = 4
depth = 6
height = 10
width = 14


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation, groups]
