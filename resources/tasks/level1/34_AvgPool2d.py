import torch
import torch.nn as nn


class Model(nn.Module):
    """2D average pooling (nn.AvgPool2d) with a 4x4 window and stride 2, no padding."""

    def __init__(self, kernel_size, stride):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 16
channels = 32
height = 66
width = 66
kernel_size = 4
stride = 2


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride]
