import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 3D convolution (nn.ConvTranspose3d, kernel 3, stride 2, padding 1,
    output_padding 1, with bias), which doubles every spatial dimension."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv_t = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding, output_padding=output_padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_t(x)


batch_size = 4
in_channels = 16
out_channels = 8
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
depth = 8
height = 12
width = 10


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
