"""nn.LayerNorm over the last dimension of a 2D fp32 tensor, with affine weight and bias.

The weight and bias are perturbed away from ones/zeros at construction (drawn from the
global RNG right after the nn.LayerNorm is created) so that a kernel must apply them.
"""

import torch
import torch.nn as nn

batch_size = 8192
dim = 8192
eps = 1e-5
dtype = torch.float32

SMALL = {"batch_size": 16, "dim": 1024}
CONFIGS = [{"batch_size": 5000, "dim": 12289}, {"batch_size": 65536, "dim": 1000}]
SMALL_CONFIGS = [{"batch_size": 13, "dim": 999}]


class Model(nn.Module):
    def __init__(self, dim: int, eps: float, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(dim))
            self.norm.bias.copy_(0.1 * torch.randn(dim))
        self.norm.to(dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=dtype)]


def get_init_inputs():
    return [dim, eps, dtype]


def get_flops():
    # mean (1), variance (3), normalize (2), affine (2): ~8 FLOPs per element
    return 8 * batch_size * dim


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return (2 * batch_size * dim + 2 * dim) * elt
