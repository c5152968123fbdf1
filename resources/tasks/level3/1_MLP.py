import torch
import torch.nn as nn


class Model(nn.Module):
    """A multi-layer perceptron: Linear -> ReLU -> Linear -> ReLU -> Linear, sizes
    input_size -> hidden sizes -> output_size."""

    def __init__(self, input_size, hidden_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for hidden in hidden_sizes:
            layers.append(nn.Linear(current, hidden))
            layers.append(nn.ReLU())
            current = hidden
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


batch_size = 128
input_size = 512
hidden_sizes = [1024, 512]
output_size = 128


def get_inputs():
    x = torch.randn(batch_size, input_size)
    return [x]


def get_init_inputs():
    return [input_size, hidden_sizes, output_size]
