import torch
import torch.nn as nn


class Model(nn.Module):
    """y[b] = sum over t of linear(x[b, t]): a per-token linear layer followed by a sum over
    the sequence dimension."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        return torch.sum(x, dim=1)


batch_size = 32
seq_len = 128
in_features = 256
out_features = 512


def get_inputs():
    x = torch.randn(batch_size, seq_len, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
