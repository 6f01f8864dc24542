# A fresh review (2026-11-27; found with the static check off, but nothing in it is a trick): see tests/test_adversarial.py.
# MaxPool2d(2, 2) with a general strided path (right for every layout forge tries) and a
# channels_last fast path that fills an NCHW-shaped output in NHWC order (a classic bug).
# channels_last (C innermost) is PyTorch's standard alternative memory format for 4-D
# activations (model.to(memory_format=torch.channels_last)); none of forge's layouts was one then.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <algorithm>
torch::Tensor pool(torch::Tensor x) {
    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t OH = H / 2, OW = W / 2;
    auto y = torch::empty({N, C, OH, OW}, x.options());
    const float* a = x.data_ptr<float>();
    float* b = y.data_ptr<float>();
    if (C > 1 && x.is_contiguous(at::MemoryFormat::ChannelsLast)) {
        // NHWC fast path: channels contiguous. BUG: y is NCHW but written in NHWC order.
        for (int64_t n = 0; n < N; ++n)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              const float* p = a + ((n * H + 2 * oh) * W + 2 * ow) * C;
              float* q = b + ((n * OH + oh) * OW + ow) * C;
              for (int64_t c = 0; c < C; ++c)
                q[c] = std::max(std::max(p[c], p[c + C]), std::max(p[c + W * C], p[c + W * C + C]));
            }
        return y;
    }
    const int64_t s0 = x.stride(0), s1 = x.stride(1), s2 = x.stride(2), s3 = x.stride(3);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const float* p = a + n * s0 + c * s1 + 2 * oh * s2 + 2 * ow * s3;
            float m = std::max(std::max(p[0], p[s3]), std::max(p[s2], p[s2 + s3]));
            if (p[0] != p[0] || p[s3] != p[s3] || p[s2] != p[s2] || p[s2 + s3] != p[s2 + s3]) m = NAN;
            b[((n * C + c) * OH + oh) * OW + ow] = m;
          }
    return y;
}
"""
_mod = load_inline(name="nhwc_maxpool_ext", cpp_sources=[_src], functions=["pool"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _mod.pool(x)
