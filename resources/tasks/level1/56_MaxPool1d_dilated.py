import torch
import torch.nn as nn


class Model(nn.Module):
    """1D max pooling (nn.MaxPool1d) with a window of 4 taps, dilation 3, stride 2, padding 2."""

    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 16
channels = 32
length = 1001
kernel_size = 4
stride = 2
padding = 2
dilation = 3


def get_inputs():
    x = torch.randn(batch_size, channels, length)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
