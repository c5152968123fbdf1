import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-head attention core on 4-D tensors with torch.matmul: softmax(Q K^T * scale) V over
    (batch, heads, seq, head_dim), with a learnable per-head temperature multiplying the
    scores, and the heads merged back to (batch, seq, heads * head_dim)."""

    def __init__(self, num_heads, head_dim):
        super().__init__()
        self.scale = head_dim ** -0.5
        self.temperature = nn.Parameter(1.0 + 0.25 * torch.rand(1, num_heads, 1, 1))

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) * (self.scale * self.temperature)
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v)
        out = out.permute(0, 2, 1, 3).contiguous()
        return out.view(out.size(0), out.size(1), -1)


batch_size = 4
num_heads = 8
seq_len = 128
head_dim = 32


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim)
    k = torch.randn(batch_size, num_heads, seq_len, head_dim)
    v = torch.randn(batch_size, num_heads, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return [num_heads, head_dim]
