import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y = mish(group_norm(conv3d(x))), with mish(z) = z * tanh(softplus(z)).
    The 3D convolution has a cubic kernel and padding 1, so the spatial size is kept."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.group_norm(x)
        return F.mish(x)


batch_size = 4
in_channels = 3
out_channels = 16
kernel_size = 3
num_groups = 4
depth = 8
height = 16
width = 16


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
