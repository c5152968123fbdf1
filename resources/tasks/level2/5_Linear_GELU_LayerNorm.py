import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y = layer_norm(gelu(linear(x))) over the output features."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = F.gelu(x)
        return self.ln(x)


batch_size = 512
in_features = 512
out_features = 1024


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
