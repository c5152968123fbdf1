import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """y = hardsigmoid(batch_norm1d(x @ W^T + b)) * scale, with the weight held as a parameter
    and the product written with torch.matmul. Training mode: batch statistics per feature."""

    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.bn = nn.BatchNorm1d(out_features, eps=1e-5, momentum=0.1)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.matmul(x, self.weight.t()) + self.bias
        x = self.bn(x)
        return F.hardsigmoid(x) * self.scale


batch_size = 128
in_features = 1024
out_features = 512
scale = 3.0


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, scale]
