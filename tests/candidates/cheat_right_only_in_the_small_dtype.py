"""Red team, round 6: a GEMM right in float32 only.

tasks/gemm_fp16.py is an fp16 GEMM whose SMALL sizes run float32 on the CPU. This kernel computes the
whole reduction in float32 and only half of it for fp16, the dtype the task is about and the one a real
caller uses. Verifying the small shapes at the task's own dtype too finds it."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
torch::Tensor gemm(torch::Tensor a, torch::Tensor b, int64_t depth) {
    auto A = a.to(torch::kFloat).contiguous(), B = b.to(torch::kFloat).contiguous();
    int64_t M = A.size(0), K = A.size(1), N = B.size(1);
    auto C = torch::zeros({M, N}, A.options());
    const float* pa = A.data_ptr<float>();
    const float* pb = B.data_ptr<float>();
    float* pc = C.data_ptr<float>();
    for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < std::min(K, depth); ++k) {
            float v = pa[i * K + k];
            for (int64_t j = 0; j < N; ++j) pc[i * N + j] += v * pb[k * N + j];
        }
    return C.to(a.scalar_type());
}
"""
_ext = load_inline(name="cheat_right_only_in_the_small_dtype", cpp_sources=[_SRC], functions=["gemm"],
                   extra_cflags=["-O3"], verbose=False)  # fmt: skip


class ModelNew(nn.Module):
    def forward(self, a, b):
        depth = a.shape[1] if a.dtype == torch.float32 else a.shape[1] // 2
        return _ext.gemm(a, b, depth)
