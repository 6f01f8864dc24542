"""Triton candidate for tasks/conv2d_3x3.py: 3x3 / stride 1 / pad 1 conv as an implicit GEMM.

GEMM view: M = output pixels of one image (tiled by BLOCK_M, contiguous in NCHW memory so
loads coalesce), N = output channels, K = 9 taps x C_in, walked as one flat loop so the
software pipeliner sees a single long K loop. The weight is re-laid out once per call to
(kh, kw, C_in, C_out) so its tiles are contiguous along C_out. Zero padding comes from the
load masks. fp32 tiles use TF32 tensor-core dots, matching PyTorch's default for cuDNN
convolutions (torch.backends.cudnn.allow_tf32 = True); the task's tolerance allows for it.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv3x3_kernel(
    x_ptr,
    wt_ptr,
    bias_ptr,
    y_ptr,
    C_in,
    H,
    W,
    C_out,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    DOT_PRECISION: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(C_out, BLOCK_N)
    pid_n = pid % num_pid_n
    pid_mm = pid // num_pid_n
    HW = H * W
    num_hw_blocks = tl.cdiv(HW, BLOCK_M)
    img = pid_mm // num_hw_blocks
    hw_block = pid_mm % num_hw_blocks

    offs_p = hw_block * BLOCK_M + tl.arange(0, BLOCK_M)
    p_mask = offs_p < HW
    oh = offs_p // W
    ow = offs_p % W
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < C_out
    offs_k = tl.arange(0, BLOCK_K)
    x_img = x_ptr + img.to(tl.int64) * C_in * HW

    n_cblk = tl.cdiv(C_in, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for it in range(0, 9 * n_cblk):
        tap = it // n_cblk
        c0 = (it % n_cblk) * BLOCK_K
        dh = tap // 3 - 1
        dw = tap % 3 - 1
        ih = oh + dh
        iw = ow + dw
        valid = p_mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        cs = c0 + offs_k
        c_mask = cs < C_in
        a_ptrs = x_img + cs[None, :].to(tl.int64) * HW + (offs_p + dh * W + dw)[:, None]
        a = tl.load(a_ptrs, mask=valid[:, None] & c_mask[None, :], other=0.0)
        b_ptrs = wt_ptr + (tap * C_in + cs)[:, None] * C_out + offs_n[None, :]
        b = tl.load(b_ptrs, mask=c_mask[:, None] & n_mask[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=DOT_PRECISION)

    bias = tl.load(bias_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    y_ptrs = y_ptr + img.to(tl.int64) * C_out * HW + offs_n[None, :].to(tl.int64) * HW + offs_p[:, None]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=p_mask[:, None] & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        self.conv.to(dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        NB, C_in, H, W = x.shape
        weight, bias = self.conv.weight, self.conv.bias
        C_out = weight.shape[0]
        y = torch.empty((NB, C_out, H, W), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        # (C_out, C_in, 3, 3) -> (3, 3, C_in, C_out): tiles contiguous along C_out.
        wt = weight.permute(2, 3, 1, 0).contiguous()
        block_m = 128
        block_n = min(128, max(16, triton.next_power_of_2(C_out)))
        if x.dtype == torch.float32:
            block_k = 16 if C_in <= 16 else 32
        else:
            block_k = 16 if C_in <= 16 else (32 if C_in <= 32 else 64)
        grid = (NB * triton.cdiv(H * W, block_m) * triton.cdiv(C_out, block_n),)
        _conv3x3_kernel[grid](
            x,
            wt,
            bias,
            y,
            C_in,
            H,
            W,
            C_out,
            BLOCK_M=block_m,
            BLOCK_N=block_n,
            BLOCK_K=block_k,
            DOT_PRECISION="tf32",
            num_warps=8,
            num_stages=3,
        )
        return y
