import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise-separable convolution: a depthwise 3x3 Conv2d (groups = in_channels) and a
    pointwise 1x1 Conv2d, then BatchNorm2d (training mode: batch statistics) and ReLU6."""

    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride,
                                   padding=kernel_size // 2, groups=in_channels)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.ReLU6(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.depthwise(x)
        x = self.pointwise(x)
        x = self.bn(x)
        return self.act(x)


batch_size = 8
in_channels = 32
out_channels = 64
kernel_size = 3
stride = 2
height = 48
width = 48


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
