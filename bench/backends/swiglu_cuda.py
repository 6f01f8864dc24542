"""CUDA C++ candidate (torch load_inline) for tasks/swiglu.py: out = silu(gate) * up for x = [gate | up].

One thread per output element, grid-stride; fp32 math. For the verdict-latency benchmark of the
CUDA backend (bench/verdict_latency.py): it is simple on purpose, not tuned.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor swiglu(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

__global__ void swiglu_kernel(const float* __restrict__ x, float* __restrict__ y, long rows, long hidden) {
    long total = rows * hidden;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        long r = i / hidden, c = i - r * hidden;
        float g = x[r * 2 * hidden + c];
        float u = x[r * 2 * hidden + hidden + c];
        y[i] = g / (1.0f + __expf(-g)) * u;
    }
}

torch::Tensor swiglu(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "swiglu: a float32 CUDA tensor");
    auto x2 = x.contiguous().view({-1, x.size(-1)});
    long rows = x2.size(0), hidden = x2.size(1) / 2;
    auto y = torch::empty({rows, hidden}, x.options());
    long total = rows * hidden;
    if (total > 0) {
        int threads = 256;
        long blocks = std::min<long>((total + threads - 1) / threads, 65535L * 8);
        swiglu_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
            x2.data_ptr<float>(), y.data_ptr<float>(), rows, hidden);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    auto shape = x.sizes().vec();
    shape.back() = hidden;
    return y.view(shape);
}
"""

_ext = load_inline(
    name="forge_bench_swiglu_cuda",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["swiglu"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.swiglu(x)
