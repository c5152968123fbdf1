import torch
import torch.nn as nn


class Model(nn.Module):
    """y = swish(linear(x)) + bias, with swish(z) = z * sigmoid(z) written out in torch ops."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(0.1 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = x * torch.sigmoid(x)
        return x + self.bias


batch_size = 256
in_features = 1024
out_features = 1024


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
