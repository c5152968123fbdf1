import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise CELU with alpha 1.5: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def __init__(self, alpha):
        super().__init__()
        self.act = nn.CELU(alpha=alpha)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x)


batch_size = 16
dim = 36000
alpha = 1.5


def get_inputs():
    x = 2.0 * torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [alpha]
