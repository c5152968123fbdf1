import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A ShuffleNet unit (stride 1): grouped 1x1 conv -> BN -> ReLU, channel shuffle,
    depthwise 3x3 conv -> BN, grouped 1x1 conv -> BN, plus the identity, then ReLU.
    Batch normalisation in training mode."""

    def __init__(self, channels, bottleneck_channels, groups):
        super().__init__()
        self.groups = groups
        self.conv1 = nn.Conv2d(channels, bottleneck_channels, 1, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(bottleneck_channels)
        self.conv2 = nn.Conv2d(bottleneck_channels, bottleneck_channels, 3, padding=1,
                               groups=bottleneck_channels, bias=False)
        self.bn2 = nn.BatchNorm2d(bottleneck_channels)
        self.conv3 = nn.Conv2d(bottleneck_channels, channels, 1, groups=groups, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def channel_shuffle(self, x: torch.Tensor) -> torch.Tensor:
        batch, channels, height, width = x.size()
        per_group = channels // self.groups
        x = x.view(batch, self.groups, per_group, height, width)
        x = torch.transpose(x, 1, 2).contiguous()
        return x.view(batch, -1, height, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.channel_shuffle(out)
        out = self.bn2(self.conv2(out))
        out = self.bn3(self.conv3(out))
        return F.relu(out + x)


batch_size = 8
channels = 64
bottleneck_channels = 64
groups = 4
height = 28
width = 28


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [channels, bottleneck_channels, groups]
