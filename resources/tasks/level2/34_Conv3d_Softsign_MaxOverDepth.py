import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y[b, c, h, w] = max over d of softsign(conv3d(x))[b, c, d, h, w], with
    softsign(z) = z / (1 + |z|): the depth dimension is reduced away."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.softsign(x)
        x, _ = torch.max(x, dim=2)
        return x


batch_size = 4
in_channels = 4
out_channels = 16
kernel_size = 3
depth = 8
height = 16
width = 16


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
