import torch
import torch.nn as nn


class Model(nn.Module):
    """Gated linear unit: h = linear(x) with 2 * hidden features, split in two halves a, g
    along the features; y = a * sigmoid(g)."""

    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.proj = nn.Linear(in_features, 2 * hidden_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        a, g = h.chunk(2, dim=-1)
        return a * torch.sigmoid(g)


batch_size = 8
seq_len = 64
in_features = 256
hidden_features = 512


def get_inputs():
    x = torch.randn(batch_size, seq_len, in_features)
    return [x]


def get_init_inputs():
    return [in_features, hidden_features]
