import torch
import torch.nn as nn


class Model(nn.Module):
    """y = avg_pool3d(selu(instance_norm3d(conv3d(x))), kernel 2): each (sample, channel)
    volume is normalised over its own positions before the activation and the pooling."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.norm = nn.InstanceNorm3d(out_channels, affine=True)
        self.act = nn.SELU()
        self.pool = nn.AvgPool3d(pool_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.norm(x)
        x = self.act(x)
        return self.pool(x)


batch_size = 4
in_channels = 4
out_channels = 16
kernel_size = 3
pool_size = 2
depth = 10
height = 18
width = 18


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_size]
