import torch
import torch.nn as nn


class Model(nn.Module):
    """Adaptive 2D average pooling (nn.AdaptiveAvgPool2d) to a fixed output size."""

    def __init__(self, output_size):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 16
channels = 64
height = 56
width = 56
output_size = (7, 7)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [output_size]
