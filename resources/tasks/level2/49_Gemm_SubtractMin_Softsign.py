import torch
import torch.nn as nn


class Model(nn.Module):
    """y = softsign(z - min_j z[:, j]) with z = linear(x): each row shifted by its minimum
    (kept as a (batch, 1) column), then softsign z / (1 + |z|)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.softsign = nn.Softsign()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.gemm(x)
        row_min = z.min(dim=1, keepdim=True).values
        return self.softsign(z - row_min)


batch_size = 128
in_features = 512
out_features = 1024


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
