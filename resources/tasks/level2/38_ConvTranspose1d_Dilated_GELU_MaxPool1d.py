import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Grouped, dilated ConvTranspose1d (stride 2, dilation 2, groups 4), GELU, then 1D max
    pooling with kernel 2."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, dilation, groups):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride,
                                         dilation=dilation, groups=groups)
        self.pool = nn.MaxPool1d(kernel_size=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.deconv(x)
        x = F.gelu(x)
        return self.pool(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = 3
stride = 2
dilation = 2
groups = 4
length = 128


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, dilation, groups]
