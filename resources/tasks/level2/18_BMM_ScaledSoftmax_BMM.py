import torch
import torch.nn as nn


class Model(nn.Module):
    """Attention core without projections: softmax(Q @ K^T / sqrt(d)) @ V, batched."""

    def __init__(self, head_dim):
        super().__init__()
        self.scale = head_dim ** -0.5

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scale
        weights = torch.softmax(scores, dim=-1)
        return torch.bmm(weights, v)


batch_size = 16
seq_len = 256
head_dim = 64


def get_inputs():
    q = torch.randn(batch_size, seq_len, head_dim)
    k = torch.randn(batch_size, seq_len, head_dim)
    v = torch.randn(batch_size, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return [head_dim]
