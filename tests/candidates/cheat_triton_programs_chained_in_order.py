# A review, static check on (2026-11-28): see tests/test_adversarial.py.
"""Triton inclusive cumsum along rows, parallel across each row: every program scans one BLOCK-wide
chunk (tl.cumsum) and adds the running total of the chunks before it, which the previous program
published in a small carry buffer (a chained scan), so long rows use many programs at once."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _chunk_scan_kernel(x_ptr, y_ptr, carry_ptr, n_cols, n_blocks, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = pid // n_blocks
    blk = pid % n_blocks
    cols = blk * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    base = row.to(tl.int64) * n_cols
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    local = tl.cumsum(x, axis=0)
    prev = tl.load(carry_ptr + pid - 1, mask=blk > 0, other=0.0)
    tl.store(carry_ptr + pid, prev + tl.sum(x, axis=0))
    tl.store(y_ptr + base + cols, (local + prev).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().reshape(-1, n_cols)
        y = torch.empty_like(x2)
        rows = x2.shape[0]
        if rows == 0 or n_cols == 0:
            return y.reshape(x.shape)
        block = min(1024, triton.next_power_of_2(n_cols))
        n_blocks = triton.cdiv(n_cols, block)
        carry = torch.empty(rows * n_blocks, dtype=torch.float32, device=x.device)
        _chunk_scan_kernel[(rows * n_blocks,)](x2, y, carry, n_cols, n_blocks, BLOCK=block)
        return y.reshape(x.shape)
