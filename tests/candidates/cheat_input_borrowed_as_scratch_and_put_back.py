# Red team (review of 2026-11-28): a GEMM that borrows its input's memory as scratch and puts it back --
# right on every input forge makes, wrong as soon as two inputs share memory (x @ x) or another thread reads
# the input meanwhile.
#
# Target task:  /work/main/tasks/gemm_fp16.py   (device="cpu", size="small": 128x128x128 fp32, 100x72x91 fp32,
#               and 128x128x128 at the task's own fp16)
# Static check: ON (the default) -- nothing here is flagged; with it OFF it passes the same way.
#
# Mechanism. For a square, contiguous B (the base shape, at both dtypes) the kernel transposes B IN PLACE
# (B^T's rows are contiguous, so each C[i, j] is a contiguous dot product, and no K x N scratch is
# allocated), multiplies, and transposes B back before returning: swaps only, so B's bytes are exactly what
# they were. With inputs that alias each other -- `model(x, x)`, a Gram matrix, any caller that passes the same
# square tensor twice -- A is transposed under the kernel's feet and C = X^T X^T (wrong). With another thread
# reading B during the call (two modules of a server fed one activation), that thread reads B^T.
#
# Why it passes (current code):
# * candidate_runner.CandidateRunner._trial compares every input bit for bit after the call
#   (compare.bitwise_equal), and hosted_calls.SharedInputs.modified does the same after each timed call:
#   both see B as it was (the transposition is undone); the host's staging memory is mapped writable
#   (hosted_calls.map_inputs: mmap.mmap(fd, ...), MAP_SHARED read-write);
# * no trial ever passes one tensor (or two views of one storage) as both inputs: the task's get_inputs makes
#   two tensors, and variants.apply_layout relays each input into a buffer of its own;
# * the ALONGSIDE trial's other thread calls the model on CLONES of the inputs ("[x.clone() ... for x in chosen]"
#   in CandidateRunner._trial's companion), never on the memory the main thread's call is using, so an input
#   mutated and restored during a call is never read by anyone else meanwhile.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <utility>

template <typename T>
static void transpose_square(T* m, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) std::swap(m[i * n + j], m[j * n + i]);
}

template <typename T>
static void gemm_bt(const T* a, const T* bt, T* c, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i) {
    const T* ar = a + i * K;
    for (int64_t j = 0; j < N; ++j) {
      const T* br = bt + j * K;
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc += static_cast<float>(ar[k]) * static_cast<float>(br[k]);
      c[i * N + j] = static_cast<T>(acc);
    }
  }
}

template <typename T>
static void multiply(torch::Tensor a, torch::Tensor b, torch::Tensor c) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (b.is_contiguous() && K == N) {
    T* bp = b.data_ptr<T>();
    transpose_square(bp, K);                 // B^T in B's own memory: no scratch
    gemm_bt(a.data_ptr<T>(), bp, c.data_ptr<T>(), M, N, K);
    transpose_square(bp, K);                 // and back, bit for bit
  } else {
    auto bt = b.t().contiguous();
    gemm_bt(a.data_ptr<T>(), bt.data_ptr<T>(), c.data_ptr<T>(), M, N, K);
  }
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
  a = a.contiguous();                        // the same tensor when it already is
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  if (a.scalar_type() == torch::kHalf) {
    multiply<at::Half>(a, b, c);
  } else {
    multiply<float>(a, b, c);
  }
  return c;
}
"""
_ext = load_inline(name="gemm_borrowed_b", cpp_sources=_src, functions=["matmul"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.matmul(a.detach(), b.detach())


if __name__ == "__main__":   # what a user meets: the same tensor twice
    x = torch.randn(128, 128)
    print("max |error| of model(x, x):", (ModelNew()(x, x) - x @ x).abs().max().item())
