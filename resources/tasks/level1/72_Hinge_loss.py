import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-label hinge loss per sample: mean over the labels of max(0, 1 - prediction * target),
    with targets in {-1, +1}."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.clamp(1 - predictions * targets, min=0).mean(dim=1)


batch_size = 4096
num_labels = 300


def get_inputs():
    predictions = torch.randn(batch_size, num_labels)
    targets = torch.randint(0, 2, (batch_size, num_labels)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
