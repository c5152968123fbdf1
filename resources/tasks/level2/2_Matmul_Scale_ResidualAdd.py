import torch
import torch.nn as nn


class Model(nn.Module):
    """y = linear(x) * scale + residual, with the residual passed in as a second input."""

    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.linear(x) * self.scale + residual


batch_size = 256
in_features = 768
out_features = 768
scale = 0.5


def get_inputs():
    x = torch.randn(batch_size, in_features)
    residual = torch.randn(batch_size, out_features)
    return [x, residual]


def get_init_inputs():
    return [in_features, out_features, scale]
