"""2D convolution, 3x3 kernel, stride 1, padding 1, with bias (nn.Conv2d), fp32, NCHW.

On GPUs PyTorch runs fp32 convolutions through cuDNN with TF32 enabled by default
(torch.backends.cudnn.allow_tf32 = True), so the tolerance admits TF32-level error.
"""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 128
height = 128
width = 128
dtype = torch.float32

SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
CONFIGS = [
    {"batch_size": 8, "in_channels": 96, "out_channels": 192, "height": 127, "width": 129},
    {"batch_size": 32, "in_channels": 3, "out_channels": 64, "height": 224, "width": 224},
]
SMALL_CONFIGS = [{"batch_size": 3, "in_channels": 5, "out_channels": 7, "height": 13, "width": 11}]

# TF32-level tolerance (10-bit mantissa products, fp32 accumulation).
TOLERANCE = {"atol": 1e-2, "rtol": 1e-2, "rel_norm": 2e-3}


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        self.conv.to(dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width, dtype=dtype)]


def get_init_inputs():
    return [in_channels, out_channels, dtype]


def get_flops():
    outputs = batch_size * out_channels * height * width
    return 2 * outputs * in_channels * 9 + outputs


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    n_x = batch_size * in_channels * height * width
    n_w = out_channels * in_channels * 9 + out_channels
    n_y = batch_size * out_channels * height * width
    return (n_x + n_w + n_y) * elt
