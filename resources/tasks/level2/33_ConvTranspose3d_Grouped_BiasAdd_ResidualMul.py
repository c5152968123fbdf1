import torch
import torch.nn as nn


class Model(nn.Module):
    """A grouped ConvTranspose3d followed by residual arithmetic on its own output:
    with c = conv_transpose3d(x), y = ((c + bias) + c) * c + c, bias per channel."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                 groups):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding,
            output_padding=output_padding, groups=groups)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        original = x.clone().detach()
        x = x + self.bias
        x = x + original
        x = x * original
        x = x + original
        return x


batch_size = 4
in_channels = 16
out_channels = 16
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
groups = 4
depth = 4
height = 8
width = 8


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, groups]
