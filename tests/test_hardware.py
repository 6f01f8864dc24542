"""Hardware evidence from plain data: ptxas reports, roofline position, the kernel census."""

from __future__ import annotations

import pytest

from conftest import TESTS
from forge_sandbox.hardware import census, describe, ptxas_stats, roofline

H100_BW, H100_FP32 = 3.35e12, 6.7e13  # the datasheet's peaks, as the device reports them


def test_ptxas_report_from_a_recorded_build_log():
    (kernel,) = ptxas_stats((TESTS / "fixtures" / "ptxas_build.log").read_text())
    assert kernel == {
        "kernel": "_Z5scalePffi", "arch": "sm_90", "registers": 8, "spill_stores": 0, "spill_loads": 0,
        "stack_bytes": 0, "smem_bytes": 1024, "barriers": 1,
    }  # fmt: skip


def test_spills_are_reported():
    log = (
        "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
        "ptxas info    : Function properties for k\n"
        "    48 bytes stack frame, 40 bytes spill stores, 44 bytes spill loads\n"
        "ptxas info    : Used 255 registers, 0 bytes smem\n"
    )
    (k,) = ptxas_stats(log)
    assert (k["registers"], k["spill_stores"], k["spill_loads"]) == (255, 40, 44)
    assert "84 B spilled" in describe({"ptxas": [k]})[0]


@pytest.mark.parametrize(
    "flops, nbytes, ms, bound",
    [
        (2 * 2**26, 3 * 4 * 2**26, 0.30, "memory"),  # elementwise at 2.7 TB/s: 80% of bandwidth
        (2 * 4096**3, 3 * 2 * 4096**2, 0.20, "compute"),  # 4096^3 GEMM: far above the ridge
        (2 * 2**26, 3 * 4 * 2**26, 3.00, "latency"),  # 8% of bandwidth: nothing saturated
        (1e6, 1e6, 0.004, "launch overhead"),
    ],
)
def test_roofline_bound(flops, nbytes, ms, bound):
    r = roofline(flops, nbytes, ms, H100_FP32, H100_BW)
    assert r["bound"] == bound, r


def test_roofline_numbers_and_the_tensor_core_case():
    r = roofline(2 * 2**26, 3 * 4 * 2**26, 0.30, H100_FP32, H100_BW)
    assert r["bytes_per_s"] == pytest.approx(3 * 4 * 2**26 / 0.30e-3)
    assert r["sol_pct"] == pytest.approx(r["bandwidth_pct"])
    gemm = roofline(2 * 4096**3, 3 * 2 * 4096**2, 0.20, H100_FP32, H100_BW)  # 687 TFLOP/s: tensor cores
    assert gemm["tensor_cores_likely"] and gemm["compute_pct"] > 100
    assert roofline(1e9, 1e9, 1.0, None, None)["bound"] == "unknown"


def test_census_splits_own_kernels_from_library_ones():
    kernels = [
        ("scale_add_kernel", 40.0),
        ("void at::native::vectorized_elementwise_kernel<4, ...>", 5.0),
        ("scale_add_kernel", 40.0),
    ]
    c = census(kernels, ["scale_add_kernel"])
    assert c["own_share"] == pytest.approx(80 / 85) and "flag" not in c
    lazy = census([("tiny_kernel", 1.0), ("sm90_xmma_gemm_f32f32_tf32f32", 99.0)], ["tiny_kernel"])
    assert lazy["own_share"] == pytest.approx(0.01) and "1% of the GPU time" in lazy["flag"]
    assert "warning:" in "\n".join(describe({"census": lazy}))
