"""Cheat: a C++ extension starts a native thread (invisible to Python's thread count) that streams memory
while the candidate is not inside its own call: the reference is the one slowed (red team, 2026-11)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <atomic>
#include <thread>
#include <vector>

static std::atomic<bool> inside{false};

static void stream_memory() {
    std::vector<char> buffer(64 << 20);
    for (;;) {
        if (!inside.load()) {
            for (size_t i = 0; i < buffer.size(); i += 64) buffer[i]++;
        }
    }
}

static bool started = [] { std::thread(stream_memory).detach(); return true; }();

torch::Tensor scale_add(torch::Tensor x, torch::Tensor y, double alpha) {
    inside = true;
    auto a = x.contiguous(), b = y.contiguous();
    auto out = torch::empty_like(a);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < a.numel(); ++i) po[i] = pa[i] * (float)alpha + pb[i];
    inside = false;
    return out;
}
"""

ext = load_inline(name="forge_test_native_thread", cpp_sources=cpp_source, functions=["scale_add"],
                  extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha)
