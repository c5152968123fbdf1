import torch
import torch.nn as nn


class Model(nn.Module):
    """y = softmax(dropout(linear(x))) in inference mode: the model puts itself in eval mode at
    construction, so the dropout (p = 0.3) is the identity and the output is deterministic."""

    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = self.dropout(x)
        return torch.softmax(x, dim=1)


batch_size = 64
in_features = 512
out_features = 1024
dropout_p = 0.3


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
