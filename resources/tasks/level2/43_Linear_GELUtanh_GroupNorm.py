import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y = group_norm(gelu_tanh(linear(x))) on (batch, features): the features of each sample
    are split into num_groups groups, each normalised on its own."""

    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc(x)
        x = F.gelu(x, approximate="tanh")
        return self.group_norm(x)


batch_size = 128
in_features = 512
out_features = 1024
num_groups = 16


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, num_groups]
