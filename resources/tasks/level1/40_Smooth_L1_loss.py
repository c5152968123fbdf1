import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Smooth L1 (Huber) loss per sample: elementwise 0.5 * d^2 / beta where |d| < beta and
    |d| - 0.5 * beta elsewhere, averaged over the feature dimension."""

    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        loss = F.smooth_l1_loss(predictions, targets, reduction="none", beta=self.beta)
        return loss.mean(dim=1)


batch_size = 8192
dim = 512
beta = 1.0


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return [beta]
