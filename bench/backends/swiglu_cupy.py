"""CuPy candidate (RawKernel, NVRTC) for tasks/swiglu.py: out = silu(gate) * up for x = [gate | up].

One thread per output element, grid-stride, launched on torch's current stream. For the
verdict-latency benchmark of the CuPy backend (bench/verdict_latency.py): simple on purpose.
"""

import cupy
import numpy as np
import torch
import torch.nn as nn

_swiglu_kernel = cupy.RawKernel(
    r"""
extern "C" __global__ void swiglu_kernel(const float* __restrict__ x, float* __restrict__ y,
                                         long long rows, long long hidden) {
    long long total = rows * hidden;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long r = i / hidden, c = i - r * hidden;
        float g = x[r * 2 * hidden + c];
        float u = x[r * 2 * hidden + hidden + c];
        y[i] = g / (1.0f + __expf(-g)) * u;
    }
}
""",
    "swiglu_kernel",
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1] // 2
        x2 = x.contiguous().reshape(-1, 2 * hidden)
        rows = x2.shape[0]
        y = torch.empty((rows, hidden), dtype=x.dtype, device=x.device)
        total = rows * hidden
        if total:
            threads = 256
            blocks = min((total + threads - 1) // threads, 65535 * 8)
            with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                _swiglu_kernel(
                    (blocks,),
                    (threads,),
                    (cupy.from_dlpack(x2), cupy.from_dlpack(y), np.int64(rows), np.int64(hidden)),
                )
        return y.reshape(*x.shape[:-1], hidden)
