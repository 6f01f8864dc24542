"""The rule on the PyTorch operators a candidate's forward may run (op_census.judge), on records made by the
recorder itself from real operators on the CPU."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from forge_sandbox.op_census import OpRecorder, Record, judge


def _record(call) -> Record:
    with OpRecorder() as recorder:
        call()
    return Record(dict(recorder.counts), dict(recorder.elements))


def test_pytorch_moving_the_references_elements_under_other_operators_is_rejected():
    # A review, 2026-12-02: an RMSNorm whose pow was PyTorch's mul, its one add (a column of one value per
    # row) a token kernel's: no operator the reference does not run, not every operator the reference runs.
    x, weight = torch.randn(64, 256), torch.randn(256)
    reference = _record(lambda: x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight)
    mean_square = torch.mean(x * x, dim=-1, keepdim=True) + 1e-6  # the token kernel's add, outside the record
    candidate = _record(lambda: (x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True)), x * weight))
    del mean_square
    reason = judge(candidate, reference, set(reference.counts))
    assert "of the elements the reference's operators read and wrote" in reason and "own kernels did next to none" in reason, reason
    # a candidate that keeps part of the model in PyTorch (the reference's last scale), its kernel the rest
    part = _record(lambda: x * weight)
    assert judge(part, reference, set(reference.counts)) == ""


def test_an_operator_is_allowed_by_the_references_same_inputs_or_its_standard_ones():
    # The same review: SDPA's math fallback on a strided layout runs bmm; on contiguous inputs the reference
    # runs one fused kernel, and bmm beside it there is PyTorch's work.
    q, k, v = (torch.randn(2, 4, 16, 8) for _ in range(3))
    fused = _record(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    strided = [t.transpose(-1, -2).contiguous().transpose(-1, -2) for t in (q, k, v)]
    fallback = _record(lambda: F.scaled_dot_product_attention(*strided, is_causal=True))

    def gemms():
        q3, k3, v3 = (t.reshape(8, 16, 8) for t in (q, k, v))
        scores = torch.bmm(q3, k3.transpose(1, 2))
        return torch.bmm(scores, v3)  # (the scaled softmax between them the candidate's own)

    candidate = _record(gemms)
    standard = set(fused.counts)
    assert "bmm" in judge(candidate, fused, standard)
    if any("bmm" in name for name in fallback.counts):  # this build's fallback: where it runs a GEMM, bmm is
        assert judge(candidate, fallback, standard) == ""  # the reference's own on those inputs
