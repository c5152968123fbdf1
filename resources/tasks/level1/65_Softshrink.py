import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise soft shrinkage: x - lambd where x > lambd, x + lambd where x < -lambd, 0
    elsewhere (lambd 0.5)."""

    def __init__(self, lambd):
        super().__init__()
        self.shrink = nn.Softshrink(lambd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shrink(x)


batch_size = 8
seq_len = 512
hidden = 96
lambd = 0.5


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden)
    return [x]


def get_init_inputs():
    return [lambd]
