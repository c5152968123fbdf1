import torch
import torch.nn as nn


class Model(nn.Module):
    """Triplet margin loss per sample: max(0, |a - p|_2 - |a - n|_2 + margin) with margin 1.0
    (nn.TripletMarginLoss, reduction="none")."""

    def __init__(self, margin):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin, reduction="none")

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor,
                negative: torch.Tensor) -> torch.Tensor:
        return self.loss(anchor, positive, negative)


batch_size = 2048
dim = 256
margin = 1.0


def get_inputs():
    anchor = torch.randn(batch_size, dim)
    positive = torch.randn(batch_size, dim)
    negative = torch.randn(batch_size, dim)
    return [anchor, positive, negative]


def get_init_inputs():
    return [margin]
