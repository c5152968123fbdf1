import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over very long rows.

    Deliberately degenerate (the KernelBench 23_Softmax shape problem, scaled down): with
    inputs in [0, 1) every probability lies between about 1.8e-5 and 4.8e-5, so all outputs
    are inside an absolute tolerance of 1e-4 and a kernel that writes zeros would pass a plain
    allclose(atol=1e-4) check.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 2
dim = 32768


def get_inputs():
    # torch.rand, not randn: with randn a few rows' maxima would exceed 1e-4.
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
