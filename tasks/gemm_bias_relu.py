"""Linear layer followed by ReLU in fp16: y = relu(x @ W^T + b).

x is (batch_size, in_features); the nn.Linear is created in fp32 and cast to `dtype`.
"""

import torch
import torch.nn as nn

batch_size = 8192
in_features = 4096
out_features = 4096
dtype = torch.float16

SMALL = {"batch_size": 128, "in_features": 128, "out_features": 96, "dtype": torch.float32}
CONFIGS = [{"batch_size": 4097, "in_features": 3072, "out_features": 5000}]
SMALL_CONFIGS = [{"batch_size": 67, "in_features": 83, "out_features": 45}]


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, dtype: torch.dtype = torch.float16):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=dtype)]


def get_init_inputs():
    return [in_features, out_features, dtype]


def get_flops():
    return 2 * batch_size * in_features * out_features + 2 * batch_size * out_features


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    n_in = batch_size * in_features + out_features * in_features + out_features
    return (n_in + batch_size * out_features) * elt
