import torch
import torch.nn as nn


class Model(nn.Module):
    """An nn.Sequential stack: Linear -> LayerNorm -> Hardswish -> Linear -> Tanh."""

    def __init__(self, in_features, hidden_features, out_features):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden_features),
            nn.LayerNorm(hidden_features),
            nn.Hardswish(),
            nn.Linear(hidden_features, out_features),
            nn.Tanh(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


batch_size = 128
in_features = 256
hidden_features = 1024
out_features = 256


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, hidden_features, out_features]
