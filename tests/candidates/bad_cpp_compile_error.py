"""Bad input: C++ that does not compile."""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
torch::Tensor running_max(torch::Tensor x) {
    return x.this_method_does_not_exist();
}
"""

ext = load_inline(name="forge_test_broken", cpp_sources=cpp_source, functions=["running_max"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.running_max(x)
