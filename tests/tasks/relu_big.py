"""ReLU of a 40 MiB float32 activation (a (2560, 4096) hidden state): an output above glibc's largest
mmap threshold (32 MiB), which a fresh allocation maps, and faults in, every call. Its SMALL shapes
are its own: the size is the point."""

import torch
import torch.nn as nn

rows = 2560
cols = 4096
SMALL = {"rows": 2560, "cols": 4096}


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
