# Attack (policy 1): the reduction the reference does with torch.sum is done by a GEMM library call
# (ones @ x, always allowed by the census as "GEMM"), behind a token C++ call that returns its input.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mod = load_inline(name="a19_tok", cpp_sources="torch::Tensor finish(torch::Tensor y){ return y; }",
                  functions=["finish"])


class ModelNew(nn.Module):
    def __init__(self, reduce_dim: int = 1):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x):
        ones = torch.ones(1, x.shape[1], dtype=x.dtype)
        y = torch.matmul(ones, x).squeeze(1)
        return mod.finish(y)
