import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y = relu6(batch_norm3d(conv_transpose3d(x))). The transposed convolution (kernel 3,
    stride 2, padding 1, output_padding 1) doubles every spatial size. The module stays in
    training mode, so batch normalisation uses the current batch's per-channel statistics."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size,
            stride=stride, padding=padding, output_padding=output_padding)
        self.bn = nn.BatchNorm3d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = self.bn(x)
        return F.relu6(x)


batch_size = 4
in_channels = 16
out_channels = 8
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
depth = 4
height = 8
width = 8


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
