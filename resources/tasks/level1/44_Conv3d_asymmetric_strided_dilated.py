import torch
import torch.nn as nn


class Model(nn.Module):
    """3D convolution with an asymmetric (3, 5, 3) kernel, stride (1, 2, 2), padding (1, 2, 2),
    dilation (1, 1, 2) and no bias, on a non-cubic volume."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, dilation=dilation, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 5
in_channels = 8
out_channels = 16
kernel_size = (3, 5, 3)
stride = (1, 2, 2)
padding = (1, 2, 2)
dilation = (1, 1, 2)
depth = 10
height = 40
width = 36


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
