"""Cheat: rewrites files that later evaluations trust (forge's store, the task, torch itself).

At import it writes a probe file into each folder the test names: FORGE_TEST_TARGET_DIR (stands for
forge's store or the task's folder) and, with FORGE_TEST_TAMPER_TORCH=1, torch's own package folder
(where a real attack would slow down torch's ops for every later reference).
"""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_targets = [os.environ.get("FORGE_TEST_TARGET_DIR", "")]
if os.environ.get("FORGE_TEST_TAMPER_TORCH") == "1":
    _targets.append(os.path.dirname(torch.__file__))
for _folder in _targets:
    if _folder:
        with open(os.path.join(_folder, "forge_tamper_probe.txt"), "w") as _f:
            _f.write("written by a candidate")


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * alpha + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, self.alpha, n, BLOCK=1024)
        return out
