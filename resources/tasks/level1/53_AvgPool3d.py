import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """3D average pooling (F.avg_pool3d) with a (2, 3, 3) window, stride 2 and padding (0, 1, 1);
    padded positions count towards the average (count_include_pad=True, the default)."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool3d(x, self.kernel_size, stride=self.stride, padding=self.padding)


batch_size = 8
channels = 12
depth = 18
height = 36
width = 30
kernel_size = (2, 3, 3)
stride = 2
padding = (0, 1, 1)


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
