"""Attack (one side quiet while the other is timed): finds the other runners' cgroup folders under
/sys/fs/cgroup, the reference's freezer among them. From there a candidate learns when the reference is
timed (its cgroup.events, cpu.stat) and slows the host's writes to the reference's freezer folder through
any file-level mechanism the kernel offers (dnotify marks did: a review, 2026-11-29). Its error names
what it found; where it finds nothing it is an honest scale_add."""

import os

import torch.nn as nn

found = []
for root, dirs, _files in os.walk("/sys/fs/cgroup"):
    found += [os.path.join(root, d) for d in dirs if d.startswith("sb-")]
    if root.count("/") > 6:
        dirs[:] = []
if found:
    raise RuntimeError(f"runners' cgroups in sight: {len(found)}")


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return x * self.alpha + y
