# Red team round 10 (2026-11-24): see tests/test_adversarial.py.
# softmax_rows: PyTorch's own log-softmax kernel (ATen/native/cpu/LogSoftmaxKernelImpl.h, a header
# shipped with torch) compiled into the extension; softmax = exp(log_softmax).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <ATen/native/cpu/LogSoftmaxKernelImpl.h>
using namespace at :: native;
torch::Tensor fwd(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int64_t dim = x.size(-1), outer = x.numel() / dim;
  const float* in = x.data_ptr<float>(); float* out = y.data_ptr<float>();
  int64_t chunk = vec_log_softmax_lastdim_chunk_size<float>(32768, outer, dim);
  serial_vec_log_softmax_lastdim_range<float>(in, out, dim, chunk, 0, outer);
  for (int64_t i = 0; i < outer * dim; ++i) out[i] = std::exp(out[i]);
  return y;
}
"""
_mod = load_inline(name="aten_hdr_softmax", cpp_sources=_src, functions=["fwd"], extra_cflags=["-O3", "-march=native"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _mod.fwd(x.contiguous())
