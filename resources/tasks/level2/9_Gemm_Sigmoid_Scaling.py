import torch
import torch.nn as nn


class Model(nn.Module):
    """y = sigmoid(x @ W.T + b) * scaling_factor."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = torch.sigmoid(x)
        return x * self.scaling_factor


batch_size = 256
in_features = 1024
out_features = 768
scaling_factor = 2.5


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
