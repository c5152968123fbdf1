import torch
import torch.nn as nn


class Model(nn.Module):
    """3D max pooling (nn.MaxPool3d) with a 3x3x3 window, stride 2, padding 1."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 6
channels = 16
depth = 20
height = 34
width = 34
kernel_size = 3
stride = 2
padding = 1


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
