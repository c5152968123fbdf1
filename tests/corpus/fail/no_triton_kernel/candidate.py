import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """'Optimised' by calling PyTorch: no Triton kernel anywhere."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.add(a, b)
