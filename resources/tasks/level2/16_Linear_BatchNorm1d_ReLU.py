import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(batch_norm(linear(x))). The module stays in training mode, so batch
    normalisation uses the mean and variance of the current batch, per feature."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = self.bn(x)
        return torch.relu(x)


batch_size = 256
in_features = 1024
out_features = 512


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
