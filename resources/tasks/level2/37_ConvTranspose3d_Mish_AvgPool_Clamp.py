import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """ConvTranspose3d with an asymmetric stride (1, 2, 2), mish written out as
    z * tanh(softplus(z)), 2x2x2 average pooling, then a clamp to [clamp_min, clamp_max]."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, clamp_min,
                 clamp_max):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size,
                                                 stride=stride, padding=padding)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = x * torch.tanh(F.softplus(x))
        x = F.avg_pool3d(x, kernel_size=2)
        return x.clamp(self.clamp_min, self.clamp_max)


batch_size = 4
in_channels = 16
out_channels = 16
kernel_size = (3, 4, 4)
stride = (1, 2, 2)
padding = (1, 1, 1)
clamp_min = -0.2
clamp_max = 0.6
depth = 8
height = 8
width = 8


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, clamp_min, clamp_max]
