import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y = scale * clamp(elu(conv3d(x)), min, max) with an asymmetric (3, 5, 3) kernel, stride
    (1, 2, 2), padding (1, 2, 1) and grouped channels (groups = 2)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, groups,
                 clamp_min, clamp_max, scale):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, groups=groups)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.elu(x, alpha=1.0)
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x * self.scale


batch_size = 4
in_channels = 8
out_channels = 16
kernel_size = (3, 5, 3)
stride = (1, 2, 2)
padding = (1, 2, 1)
groups = 2
clamp_min = -0.5
clamp_max = 0.5
scale = 1.5
depth = 8
height = 20
width = 16


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups,
            clamp_min, clamp_max, scale]
