import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Cosine embedding loss per sample: 1 - cos(x1, x2) for pairs labelled +1 and
    max(0, cos(x1, x2) - margin) for pairs labelled -1 (margin 0.25, reduction="none")."""

    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cosine_embedding_loss(x1, x2, labels, margin=self.margin, reduction="none")


batch_size = 4096
dim = 256
margin = 0.25


def get_inputs():
    x1 = torch.randn(batch_size, dim)
    x2 = x1 + torch.randn(batch_size, dim)  # correlated pairs, cos around 0.7
    labels = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [x1, x2, labels]


def get_init_inputs():
    return [margin]
