import torch
import torch.nn as nn


class Model(nn.Module):
    """y[b] = logsumexp over j of linear(x)[b, j], keeping the reduced dimension."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        return torch.logsumexp(x, dim=1, keepdim=True)


batch_size = 2048
in_features = 512
out_features = 512


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
