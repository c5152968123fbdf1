import torch
import torch.nn as nn


class Model(nn.Module):
    """y[b, c] = mean over (h, w) of group_norm(conv2d(x))[b, c, h, w]."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.gn(x)
        return x.mean(dim=(2, 3))


batch_size = 32
in_channels = 8
out_channels = 64
kernel_size = 3
num_groups = 8
height = 32
width = 32


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
