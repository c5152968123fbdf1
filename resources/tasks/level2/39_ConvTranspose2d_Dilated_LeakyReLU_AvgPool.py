import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """ConvTranspose2d with stride 2, dilation 2, output_padding 1 and 2 groups, leaky ReLU
    (negative slope 0.1), then 2x2 average pooling."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                 dilation, groups, negative_slope):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding,
            output_padding=output_padding, groups=groups, dilation=dilation)
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        return F.avg_pool2d(x, 2)


batch_size = 8
in_channels = 16
out_channels = 32
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
dilation = 2
groups = 2
negative_slope = 0.1
height = 24
width = 24


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, dilation,
            groups, negative_slope]
