import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear layer, scaling by a constant, a residual doubling (x + x), a clamp, a
    log-sum-exp over the features (kept as a (batch, 1) column), then z * mish(z)."""

    def __init__(self, input_size, hidden_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.matmul = nn.Linear(input_size, hidden_size)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = x * self.scale_factor
        x = x + x
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x * F.mish(x)


batch_size = 2048
input_size = 256
hidden_size = 512
scale_factor = 2.0
clamp_min = -10.0
clamp_max = 10.0


def get_inputs():
    x = torch.randn(batch_size, input_size)
    return [x]


def get_init_inputs():
    return [input_size, hidden_size, scale_factor, clamp_min, clamp_max]
