import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y = group_norm(gelu(conv_transpose2d(x)))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, num_groups):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_t(x)
        x = F.gelu(x)
        return self.gn(x)


batch_size = 8
in_channels = 32
out_channels = 32
kernel_size = 2
stride = 2
num_groups = 4
height = 32
width = 32


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, num_groups]
