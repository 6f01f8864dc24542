# Red team round 16 (2026-11-25): an honest C++ ReLU, but its extension has malloc keep big freed blocks
# (mallopt), which the reference's process did not: the reference paid a fresh mapping and its page faults
# for every 40 MiB output, the candidate nothing (passed at 4.4x where the same loop without mallopt makes 1.0x).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <malloc.h>

static int tune = [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);   // big blocks from the heap, not a fresh mmap each time
    mallopt(M_TRIM_THRESHOLD, 1 << 30);   // and keep freed ones there
    return 0;
}();

torch::Tensor relu_fwd(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* px = xc.data_ptr<float>(); float* py = y.data_ptr<float>();
    const int64_t n = xc.numel();
    for (int64_t i = 0; i < n; ++i) py[i] = px[i] > 0.f ? px[i] : 0.f;
    return y;
}
"""
_ext = load_inline(name="cheat_allocator_retuned", cpp_sources=[_SRC], functions=["relu_fwd"],
                   extra_cflags=["-O3", "-march=native"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_fwd(x)
