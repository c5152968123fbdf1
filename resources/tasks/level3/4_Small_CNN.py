import torch
import torch.nn as nn


class Model(nn.Module):
    """A small image classifier: two conv3x3 -> ReLU -> maxpool2x2 stages, then flatten and a
    linear layer to class logits."""

    def __init__(self, in_channels, num_classes, image_size):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * (image_size // 4) * (image_size // 4), num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        return self.fc(x)


batch_size = 64
in_channels = 3
num_classes = 100
image_size = 32


def get_inputs():
    x = torch.randn(batch_size, in_channels, image_size, image_size)
    return [x]


def get_init_inputs():
    return [in_channels, num_classes, image_size]
