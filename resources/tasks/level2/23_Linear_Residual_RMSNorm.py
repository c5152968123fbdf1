import torch
import torch.nn as nn


class Model(nn.Module):
    """y = rms_norm(x + linear(x)) over the features, with
    rms_norm(h) = h / sqrt(mean(h^2) + eps) * weight."""

    def __init__(self, features, eps):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.weight = nn.Parameter(torch.ones(features))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.linear(x)
        rms = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return h * rms * self.weight


batch_size = 8
seq_len = 128
features = 512
eps = 1e-6


def get_inputs():
    x = torch.randn(batch_size, seq_len, features)
    return [x]


def get_init_inputs():
    return [features, eps]
