import torch
import torch.nn as nn


class Model(nn.Module):
    """Grouped, dilated transposed 1D convolution (nn.ConvTranspose1d): 8 groups, kernel 5,
    stride 3, padding 2, dilation 2, with bias."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups):
        super().__init__()
        self.conv_t = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding, dilation=dilation, groups=groups)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_t(x)


batch_size = 16
in_channels = 32
out_channels = 48
kernel_size = 5
stride = 3
padding = 2
dilation = 2
groups = 8
length = 251


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation, groups]
