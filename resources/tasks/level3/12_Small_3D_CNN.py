import torch
import torch.nn as nn


class Model(nn.Module):
    """A small 3-D CNN classifier for volumes: two stages of Conv3d -> BatchNorm3d -> ReLU ->
    MaxPool3d, global average pooling over the volume, then a linear head (batch
    normalisation in training mode)."""

    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(in_channels, 16, kernel_size=3, padding=1),
            nn.BatchNorm3d(16),
            nn.ReLU(inplace=True),
            nn.MaxPool3d(2),
            nn.Conv3d(16, 32, kernel_size=3, padding=1),
            nn.BatchNorm3d(32),
            nn.ReLU(inplace=True),
            nn.MaxPool3d(2),
        )
        self.classifier = nn.Linear(32, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = x.mean(dim=[2, 3, 4])
        return self.classifier(x)


batch_size = 8
in_channels = 1
num_classes = 32
depth = 16
height = 32
width = 32


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, num_classes]
