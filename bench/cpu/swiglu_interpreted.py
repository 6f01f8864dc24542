"""Triton candidate for tasks/swiglu.py in large 2D tiles (256 rows x 4096 columns), so that the CPU's
Triton interpreter runs a full-size call in a few hundred numpy operations, where the bundled kernel's
2048-wide row blocks would take it minutes per call: for measuring full-size verification on the CPU
(bench/verify_at_full_size.py --device cpu --candidate bench/cpu/swiglu_interpreted.py). Not for a
GPU: a tile this large is no kernel to run there."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swiglu(x_ptr, y_ptr, rows, hidden, sxr, sxc, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[None, :]
    m = (r < rows) & (c < hidden)
    g = tl.load(x_ptr + r * sxr + c * sxc, mask=m, other=0.0).to(tl.float32)
    u = tl.load(x_ptr + r * sxr + (c + hidden) * sxc, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + r * hidden + c, g / (1.0 + tl.exp(-g)) * u, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1])
        hidden = x.shape[-1] // 2
        y = torch.empty((x2.shape[0], hidden), dtype=x.dtype, device=x.device)
        ROWS, BLOCK = 256, 4096
        grid = (triton.cdiv(x2.shape[0], ROWS), triton.cdiv(hidden, BLOCK))
        _swiglu[grid](x2, y, x2.shape[0], hidden, x2.stride(0), x2.stride(1), ROWS=ROWS, BLOCK=BLOCK)
        return y.reshape(*x.shape[:-1], hidden)
