"""2D max pooling, kernel 2, stride 2, no padding (nn.MaxPool2d(2, 2)), fp32, NCHW.

Odd spatial sizes drop the last row/column (floor mode).
"""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 256
width = 256
dtype = torch.float32

SMALL = {"batch_size": 2, "channels": 4, "height": 64, "width": 64}
CONFIGS = [{"batch_size": 16, "channels": 96, "height": 255, "width": 301}]
SMALL_CONFIGS = [{"batch_size": 3, "channels": 5, "height": 33, "width": 27}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=dtype)]


def get_init_inputs():
    return []


def get_flops():
    # 3 comparisons per output element
    return 3 * batch_size * channels * (height // 2) * (width // 2)


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    n_out = batch_size * channels * (height // 2) * (width // 2)
    return (batch_size * channels * height * width + n_out) * elt
