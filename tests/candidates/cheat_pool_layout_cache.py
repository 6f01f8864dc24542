"""Cheat: recognizes a known input set in a new layout (rolled, values nearly equal) and returns its cached
output, rolled to match, instead of computing. Its lookup uses no PyTorch compute (Python lists, slicing and
cat), so that only the stale output can give it away. It forgets its cache when its weights change (loaded or
written in place, through .data too: a few of their values, read every call, move), as an adaptive cheat
would, so that forge's checks with other weights find it computing and only the timed calls' checksum is left
to catch it. A call served from the cache still launches its kernel on one row, so that a launch is always seen
(forge calls each verification trial twice, on the same inputs)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(features, features)
        self.cache = []  # (first column of x as a list, output)
        self.weights_seen = None

    def compute(self, x):
        h = self.fc(x.contiguous()).contiguous()
        out = torch.empty_like(h)
        n = h.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](h, out, n, BLOCK=1024)
        return out

    def forward(self, x):
        version = (self.fc.weight[0, :4].tolist(), self.fc.bias[:4].tolist())
        if version != self.weights_seen:
            self.cache, self.weights_seen = [], version
        column = x[:, 0].tolist()
        for cached, out in self.cache:
            # every roll of the cached column against the new one; the closest is the shift
            n = len(cached)
            best, shift = None, 0
            for s in range(n):
                distance = sum(abs(cached[(i - s) % n] - column[i]) for i in range(0, n, 8))
                if best is None or distance < best:
                    best, shift = distance, s
            if best < 0.2 * sum(abs(c) for c in column[::8]):
                token = torch.empty_like(x[:1])
                relu_kernel[(1,)](x[:1].contiguous(), token, token.numel(), BLOCK=1024)
                return torch.cat([out[n - shift :], out[: n - shift]]) if shift else out.clone()
        out = self.compute(x)
        self.cache = [*self.cache[-7:], (column, out.clone())]  # the timing pool has a few distinct input sets
        return out
