import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Cosine similarity between matching vectors of two (batch, seq, dim) tensors along the
    last dimension: a.b / max(|a| |b|, eps), one value per (sample, position)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.cosine_similarity(a, b, dim=-1)


batch_size = 32
seq_len = 128
dim = 257


def get_inputs():
    a = torch.randn(batch_size, seq_len, dim)
    b = torch.randn(batch_size, seq_len, dim)
    return [a, b]


def get_init_inputs():
    return []
