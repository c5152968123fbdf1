import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose3d, 3D max pooling, softmax over the channels, subtraction of a learnable
    per-channel offset, swish z * sigmoid(z), then the maximum over the channels."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                 pool_kernel_size, pool_stride):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding,
            output_padding=output_padding)
        self.max_pool = nn.MaxPool3d(kernel_size=pool_kernel_size, stride=pool_stride)
        self.subtract = nn.Parameter(torch.randn(out_channels) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = self.max_pool(x)
        x = torch.softmax(x, dim=1)
        x = x - self.subtract.view(1, -1, 1, 1, 1)
        x = torch.sigmoid(x) * x
        return torch.max(x, dim=1)[0]


batch_size = 4
in_channels = 32
out_channels = 8
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
pool_kernel_size = 2
pool_stride = 2
depth = 8
height = 16
width = 16


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width) * 3.0
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding,
            pool_kernel_size, pool_stride]
