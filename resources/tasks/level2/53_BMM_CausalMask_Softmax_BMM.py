import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """Causal attention core with batched matmuls: scores = Q @ K^T / sqrt(d), the entries above
    the diagonal filled with -inf (mask from torch.tril), softmax over the keys, then @ V."""

    def __init__(self, max_seq_len):
        super().__init__()
        mask = torch.tril(torch.ones(max_seq_len, max_seq_len, dtype=torch.bool))
        self.register_buffer("mask", mask)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        t, d = q.size(1), q.size(2)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)
        scores = scores.masked_fill(~self.mask[:t, :t], float("-inf"))
        weights = scores.softmax(dim=-1)
        return torch.bmm(weights, v)


batch_size = 16
seq_len = 128
head_dim = 64


def get_inputs():
    q = torch.randn(batch_size, seq_len, head_dim)
    k = torch.randn(batch_size, seq_len, head_dim)
    v = torch.randn(batch_size, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return [seq_len]
