import torch
import torch.nn as nn


class Model(nn.Module):
    """y[b] = mean over j of clamp(linear(x)[b, j], clamp_min, clamp_max), keeping the reduced
    dimension."""

    def __init__(self, in_features, out_features, clamp_min, clamp_max):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        return x.mean(dim=1, keepdim=True)


batch_size = 2048
in_features = 512
out_features = 512
clamp_min = -0.25
clamp_max = 0.5


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, clamp_min, clamp_max]
