import torch
import torch.nn as nn


class Model(nn.Module):
    """A two-layer LSTM (batch_first) over a sequence; the top layer's output at the last time
    step goes through a linear head."""

    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)          # (batch, seq, hidden)
        return self.fc(out[:, -1, :])  # (batch, output_size)


batch_size = 16
seq_len = 32
input_size = 64
hidden_size = 128
num_layers = 2
output_size = 32


def get_inputs():
    x = torch.randn(batch_size, seq_len, input_size)
    return [x]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
