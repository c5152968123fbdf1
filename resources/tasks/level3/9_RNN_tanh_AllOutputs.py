import torch
import torch.nn as nn


class Model(nn.Module):
    """A vanilla Elman RNN (tanh nonlinearity, one layer, batch_first) with a given initial
    hidden state; returns the outputs of all time steps, (batch, seq, hidden_size)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.rnn = nn.RNN(input_size, hidden_size, num_layers=1, nonlinearity="tanh",
                          batch_first=True)

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        output, _ = self.rnn(x, h0)
        return output


batch_size = 16
seq_len = 64
input_size = 64
hidden_size = 128


def get_inputs():
    x = torch.randn(batch_size, seq_len, input_size)
    h0 = torch.randn(1, batch_size, hidden_size) * 0.5
    return [x, h0]


def get_init_inputs():
    return [input_size, hidden_size]
