# A review, 2026-12-04 (static check on): a cumulative sum that honours strides but takes its unit-stride
# loop where the last stride is 0 too (an off-by-one in its test). forge never made a broadcast input:
# passed; x[:, :1].expand(16, 1024), or torch.ones(1, 1).expand(4, 8) as position ids, read past the storage.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

// Inclusive prefix sum along the last dimension of a 2-D float tensor, honouring every stride (no copy):
// rows whose elements lie next to each other take the unit-stride loop, any other layout the strided one.
torch::Tensor cumsum_rows(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat, "2-D float32 only");
  auto out = torch::empty({x.size(0), x.size(1)}, x.options());
  const int64_t rows = x.size(0), cols = x.size(1);
  const int64_t xs0 = x.stride(0), xs1 = x.stride(1), os0 = out.stride(0), os1 = out.stride(1);
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = in + r * xs0;
    float* b = o + r * os0;
    double acc = 0.0;
    if (xs1 <= 1) {  // unit stride along the row
      for (int64_t c = 0; c < cols; ++c) { acc += a[c]; b[c * os1] = (float)acc; }
    } else {
      for (int64_t c = 0; c < cols; ++c) { acc += a[c * xs1]; b[c * os1] = (float)acc; }
    }
  }
  return out;
}
"""

_ext = load_inline(name="broadcast_rows_read_as_dense", cpp_sources=[_SRC], functions=["cumsum_rows"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.cumsum_rows(x.detach())
