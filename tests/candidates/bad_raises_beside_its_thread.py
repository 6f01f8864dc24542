"""Raises while a thread it started is still running: the verdict says so, as such a thread (two
launches at once in Triton's interpreter, say) can be what made the call fail."""

import threading
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        raise RuntimeError("the launch failed")
