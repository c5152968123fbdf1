import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y = mean over channels of (hardsigmoid(conv3d(x)) * scale): one value per position,
    the channel dimension kept with size 1."""

    def __init__(self, in_channels, out_channels, kernel_size, scale):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=True)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.hardsigmoid(x) * self.scale
        return torch.mean(x, dim=1, keepdim=True)


batch_size = 4
in_channels = 8
out_channels = 16
kernel_size = 3
scale = 2.0
depth = 10
height = 18
width = 18


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width) * 2.0
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale]
