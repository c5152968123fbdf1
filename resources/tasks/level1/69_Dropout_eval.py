import torch
import torch.nn as nn


class Model(nn.Module):
    """Dropout (p = 0.3) in inference mode, then a scale by 2. The module is put in eval mode at
    construction, so the dropout is the identity and the output is exactly 2 * x."""

    def __init__(self, p, scale):
        super().__init__()
        self.dropout = nn.Dropout(p=p)
        self.scale = scale
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(x) * self.scale


batch_size = 16
dim = 32768
p = 0.3
scale = 2.0


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [p, scale]
