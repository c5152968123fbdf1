import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(x @ W.T + b + extra_bias): a linear layer, a second learnable bias, then ReLU."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.extra_bias = nn.Parameter(0.1 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = x + self.extra_bias
        return torch.relu(x)


batch_size = 256
in_features = 1024
out_features = 512


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
