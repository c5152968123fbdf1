import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv3d, then layer normalisation over the channels at every position (channels moved
    last, normalised, moved back), then GELU in its tanh approximation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=1)
        self.ln = nn.LayerNorm(out_channels, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x.permute(0, 2, 3, 4, 1)
        x = self.ln(x)
        x = x.permute(0, 4, 1, 2, 3)
        return F.gelu(x, approximate="tanh")


batch_size = 4
in_channels = 8
out_channels = 32
kernel_size = 3
stride = 2
depth = 8
height = 16
width = 16


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
