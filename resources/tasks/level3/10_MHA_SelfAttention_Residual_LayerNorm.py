import torch
import torch.nn as nn


class Model(nn.Module):
    """Post-norm self-attention block: y = layer_norm(x + mha(x, x, x)) with
    nn.MultiheadAttention (batch_first=True, no dropout); the attention weights are not
    returned."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        attn_out, _ = self.attn(x, x, x, need_weights=False)
        return self.norm(x + attn_out)


batch_size = 8
seq_len = 128
embed_dim = 256
num_heads = 8


def get_inputs():
    x = torch.randn(batch_size, seq_len, embed_dim)
    return [x]


def get_init_inputs():
    return [embed_dim, num_heads]
