import torch
import torch.nn as nn


class Model(nn.Module):
    """y = mish(dropout(linear(x))) with a dropout probability of 0.0, so the dropout is the
    identity and the output is deterministic."""

    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(p=dropout_p)
        self.mish = nn.Mish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = self.dropout(x)
        return self.mish(x)


batch_size = 128
in_features = 512
out_features = 1024
dropout_p = 0.0


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
