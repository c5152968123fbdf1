import torch
import torch.nn as nn


class Model(nn.Module):
    """RMS normalisation over the last dimension, written in plain torch ops:
    y = x / sqrt(mean(x^2) + eps) * weight."""

    def __init__(self, features, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


batch_size = 32
seq_len = 128
features = 512
eps = 1e-6


def get_inputs():
    x = torch.randn(batch_size, seq_len, features)
    return [x]


def get_init_inputs():
    return [features, eps]
