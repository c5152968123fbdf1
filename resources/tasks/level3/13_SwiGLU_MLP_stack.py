import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLUBlock(nn.Module):
    """h = layer_norm(x); x + down(silu(gate(h)) * up(h))."""

    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.gate = nn.Linear(dim, hidden_dim, bias=False)
        self.up = nn.Linear(dim, hidden_dim, bias=False)
        self.down = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    """A stack of pre-norm SwiGLU MLP blocks held in an nn.ModuleList and applied in turn:
    x = x + W_down(silu(W_gate ln(x)) * W_up ln(x)), then a final LayerNorm."""

    def __init__(self, dim, hidden_dim, num_layers):
        super().__init__()
        self.layers = nn.ModuleList([SwiGLUBlock(dim, hidden_dim) for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.final_norm(x)


batch_size = 4
seq_len = 64
dim = 256
hidden_dim = 688
num_layers = 3


def get_inputs():
    x = torch.randn(batch_size, seq_len, dim)
    return [x]


def get_init_inputs():
    return [dim, hidden_dim, num_layers]
