import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(logsumexp(conv3d(x), dim=1, keepdim=True)): the channels at every position are
    reduced with a log-sum-exp, leaving one channel."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return torch.relu(x)


batch_size = 4
in_channels = 4
out_channels = 24
kernel_size = 3
stride = 1
padding = 1
depth = 8
height = 16
width = 16


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
