import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalisation (nn.LayerNorm) over the last dimension of a (batch, seq, features)
    tensor, with a learnable elementwise affine transform."""

    def __init__(self, features):
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 32
seq_len = 128
features = 512


def get_inputs():
    x = torch.randn(batch_size, seq_len, features)
    return [x]


def get_init_inputs():
    return [features]
