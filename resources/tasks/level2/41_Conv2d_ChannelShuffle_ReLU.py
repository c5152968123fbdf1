import torch
import torch.nn as nn


class Model(nn.Module):
    """Grouped Conv2d, then a ShuffleNet channel shuffle (view as (b, groups, c // groups, h, w),
    swap the two channel axes, flatten back), then ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, groups=groups)
        self.groups = groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        b, c, h, w = x.shape
        x = x.view(b, self.groups, c // self.groups, h, w)
        x = x.transpose(1, 2).contiguous()
        x = x.view(b, c, h, w)
        return torch.relu(x)


batch_size = 8
in_channels = 32
out_channels = 64
kernel_size = 3
groups = 4
height = 32
width = 32


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]
