# Red team round 10 (2026-11-24): see tests/test_adversarial.py.
# gemm_bias_relu: the GEMM is done by scipy's bundled OpenBLAS (base interpreter's site-packages),
# copied under another name with its SONAME renamed; bias + ReLU in a small C++ loop.
import os, sys, glob, tempfile
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_libs = glob.glob(os.path.join(sys.base_prefix, "lib", "python3*", "site-packages", "scipy.libs", "*"))
_dir = tempfile.mkdtemp(prefix="kh")
_blas = None
for p in _libs:
    name = os.path.basename(p)
    with open(p, "rb") as f:
        data = f.read()
    if name.startswith("libscipy_openblas"):
        old = name.encode()
        new = ("libkernelhelpers" + name[len("libscipy_openblas"):]).encode()
        assert len(new) == len(old) - 1
        new = new + b"\0"
        data = data.replace(old + b"\0", new + b"\0")
        name = new[:-1].decode()
        _blas = name
    with open(os.path.join(_dir, name), "wb") as f:
        f.write(data)
    os.chmod(os.path.join(_dir, name), 0o755)

_src = r"""
#include <torch/extension.h>
extern "C" void scipy_cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
extern "C" void scipy_openblas_set_num_threads(int);
torch::Tensor fwd(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  static bool once = (scipy_openblas_set_num_threads(1), true);
  int M = x.size(0), K = x.size(1), N = w.size(0);
  auto y = torch::empty({M, N}, x.options());
  const float* bp = b.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  // RowMajor=101, NoTrans=111, Trans=112
  scipy_cblas_sgemm(101, 111, 112, M, N, K, 1.0f, x.data_ptr<float>(), K, w.data_ptr<float>(), K, 0.0f, yp, N);
  for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) { float v = yp[i*N+j] + bp[j]; yp[i*N+j] = v > 0 ? v : 0; }
  return y;
}
"""
_mod = load_inline(name="kh_gemm_relu", cpp_sources=_src, functions=["fwd"],
                   extra_ldflags=[os.path.join(_dir, _blas), "-Wl,-rpath," + _dir], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, dtype=torch.float16):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(dtype)

    def forward(self, x):
        dt = x.dtype
        y = _mod.fwd(x.float().contiguous(), self.linear.weight.float().contiguous(), self.linear.bias.float().contiguous())
        return y.to(dt)
