import torch
import torch.nn as nn


class Model(nn.Module):
    """A two-layer bidirectional GRU (batch_first) started from a zero state; returns the final
    hidden state h_n of every layer and direction, moved batch-first:
    (batch, num_layers * 2, hidden_size)."""

    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers=num_layers, batch_first=True,
                          bidirectional=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, h_n = self.gru(x)               # (num_layers * 2, batch, hidden)
        return h_n.transpose(0, 1).contiguous()


batch_size = 16
seq_len = 32
input_size = 64
hidden_size = 128
num_layers = 2


def get_inputs():
    x = torch.randn(batch_size, seq_len, input_size)
    return [x]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
