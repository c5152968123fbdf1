import torch
import torch.nn as nn


class Model(nn.Module):
    """y = max_pool1d(relu(conv1d(x)), pool_size)."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool1d(pool_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.relu(x)
        return self.pool(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = 5
pool_size = 2
length = 1024


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_size]
