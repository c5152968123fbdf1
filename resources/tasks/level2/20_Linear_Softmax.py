import torch
import torch.nn as nn


class Model(nn.Module):
    """y = softmax(linear(x)) over the output features (a classifier head)."""

    def __init__(self, in_features, num_classes):
        super().__init__()
        self.linear = nn.Linear(in_features, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.linear(x), dim=1)


batch_size = 512
in_features = 1024
num_classes = 256


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, num_classes]
