import torch
import torch.nn as nn


class Model(nn.Module):
    """Single-head self-attention over a (batch, seq, embed) input:
    q, k, v = x Wq, x Wk, x Wv; y = softmax(q k^T / sqrt(d)) v Wo."""

    def __init__(self, embed_dim):
        super().__init__()
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.scale = embed_dim ** -0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = self.q_proj(x)
        k = self.k_proj(x)
        v = self.v_proj(x)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        weights = torch.softmax(scores, dim=-1)
        return self.out_proj(torch.matmul(weights, v))


batch_size = 8
seq_len = 128
embed_dim = 256


def get_inputs():
    x = torch.randn(batch_size, seq_len, embed_dim)
    return [x]


def get_init_inputs():
    return [embed_dim]
