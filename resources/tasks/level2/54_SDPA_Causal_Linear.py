import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Causal scaled dot-product attention over (batch, heads, seq, head_dim) tensors with
    F.scaled_dot_product_attention(is_causal=True), heads merged back to
    (batch, seq, heads * head_dim), then a linear output projection."""

    def __init__(self, num_heads, head_dim, out_features):
        super().__init__()
        self.out_proj = nn.Linear(num_heads * head_dim, out_features)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        b, h, t, d = attn.shape
        attn = attn.transpose(1, 2).reshape(b, t, h * d)
        return self.out_proj(attn)


batch_size = 4
num_heads = 8
seq_len = 128
head_dim = 32
out_features = 256


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim)
    k = torch.randn(batch_size, num_heads, seq_len, head_dim)
    v = torch.randn(batch_size, num_heads, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return [num_heads, head_dim, out_features]
