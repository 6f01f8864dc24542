# Red team round 10 (2026-11-24): see tests/test_adversarial.py.
# sum_dim on the CPU (Triton interpreter): the "kernel" body calls numpy's compiled reduction on the
# whole tensor. In the interpreter a @triton.jit body is plain Python, and forge allows numpy's compute
# within a Triton launch as the kernel's own.
import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl

_job = {}


def _numpy_sum():
    x, out = _job["x"], _job["out"]
    np.sum(x, axis=1, out=out)


@triton.jit
def _sum_kernel(flag_ptr):
    _numpy_sum()
    tl.store(flag_ptr, 1)


class ModelNew(nn.Module):
    def __init__(self, reduce_dim: int = 1):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty((x.shape[0], x.shape[2]), dtype=x.dtype)
        flag = torch.zeros(1, dtype=torch.int32)
        _job["x"], _job["out"] = x.detach().numpy(), out.detach().numpy()
        _sum_kernel[(1,)](flag)
        return out
