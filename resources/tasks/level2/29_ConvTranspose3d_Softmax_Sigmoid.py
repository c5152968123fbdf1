import torch
import torch.nn as nn


class Model(nn.Module):
    """y = sigmoid(softmax(conv_transpose3d(x), dim=1)): a softmax over the channels at every
    position, followed by a sigmoid."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=True)
        self.softmax = nn.Softmax(dim=1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = self.softmax(x)
        return self.sigmoid(x)


batch_size = 4
in_channels = 32
out_channels = 8
kernel_size = 3
stride = 1
padding = 1
depth = 8
height = 16
width = 16


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width) * 2.0
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
