import torch
import torch.nn as nn


class Model(nn.Module):
    """A MobileNet-style depthwise separable block: depthwise 3x3 conv -> BN -> ReLU, then
    pointwise 1x1 conv -> BN -> ReLU (batch normalisation in training mode)."""

    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, 3, stride=stride, padding=1,
                                   groups=in_channels, bias=False)
        self.bn1 = nn.BatchNorm2d(in_channels)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.depthwise(x)))
        return torch.relu(self.bn2(self.pointwise(x)))


batch_size = 8
in_channels = 32
out_channels = 64
stride = 1
height = 56
width = 56


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, stride]
