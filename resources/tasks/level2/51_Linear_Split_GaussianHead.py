import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A Gaussian output head: one linear layer whose output is split into a mean and a raw
    scale; returns the tuple (mean, softplus(raw_scale) + min_std)."""

    def __init__(self, in_features, out_features, min_std):
        super().__init__()
        self.head = nn.Linear(in_features, 2 * out_features)
        self.out_features = out_features
        self.min_std = min_std

    def forward(self, x: torch.Tensor):
        h = self.head(x)
        mean, raw_scale = torch.split(h, self.out_features, dim=-1)
        std = F.softplus(raw_scale) + self.min_std
        return mean, std


batch_size = 128
in_features = 512
out_features = 256
min_std = 1e-3


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, min_std]
