"""What the target device can do, read from the device itself (never a table of a few GPUs).

Peak figures are derived from the device's own attributes: memory bandwidth =
2 (double data rate) x memory clock x bus width; fp32 peak = SMs x fp32 lanes
per SM x 2 (FMA) x SM clock, with the lanes per SM given by the compute
capability's architecture (CUDA programming guide, "Arithmetic Instructions").
Tensor-core peaks depend on the SKU and are left to the coder's knowledge.
Runs inside a runner process (it initializes CUDA).
"""

from __future__ import annotations

import os

import torch

# fp32 lanes per SM by compute-capability major (and minor where it differs)
_FP32_LANES = {(6, 0): 64, (7, 0): 64, (7, 5): 64, (8, 0): 64}
_FP32_LANES_DEFAULT = 128  # 8.6 and later consumer/datacenter parts, 9.0 (Hopper), 10.x, 12.x

# cudaDeviceAttr numbers (cuda_runtime_api.h), for reading attributes through CuPy
_ATTR_CLOCK_RATE, _ATTR_MEMORY_CLOCK_RATE, _ATTR_MEMORY_BUS_WIDTH = 13, 36, 37


def _cupy_attributes(index: int) -> dict:
    try:
        import cupy

        get = cupy.cuda.runtime.deviceGetAttribute
        return {
            "clock_rate": get(_ATTR_CLOCK_RATE, index),
            "memory_clock_rate": get(_ATTR_MEMORY_CLOCK_RATE, index),
            "memory_bus_width": get(_ATTR_MEMORY_BUS_WIDTH, index),
        }
    except Exception:  # no CuPy, or no such attribute on this driver: the figure stays unknown
        return {}


def cuda_facts(device: torch.device) -> dict:
    index = device.index if device.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    attrs = {k: getattr(props, k, 0) or 0 for k in ("clock_rate", "memory_clock_rate", "memory_bus_width")}
    if not all(attrs.values()):
        attrs.update({k: v for k, v in _cupy_attributes(index).items() if v and not attrs.get(k)})
    facts = {
        "device_name": props.name,
        "capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "memory_gb": round(props.total_memory / 2**30, 1),
        "l2_mb": round(getattr(props, "L2_cache_size", 0) / 2**20, 1) or None,
        "sm_clock_mhz": attrs["clock_rate"] / 1e3 if attrs["clock_rate"] else None,
    }
    if attrs["memory_clock_rate"] and attrs["memory_bus_width"]:
        facts["memory_bandwidth_bytes_per_s"] = 2 * attrs["memory_clock_rate"] * 1e3 * attrs["memory_bus_width"] / 8
    if attrs["clock_rate"]:
        lanes = _FP32_LANES.get((props.major, props.minor), _FP32_LANES_DEFAULT if props.major >= 8 else 64)
        facts["fp32_flops_per_s"] = props.multi_processor_count * lanes * 2 * attrs["clock_rate"] * 1e3
    return facts


def cpu_facts() -> dict:
    return {"device_name": "cpu", "cores": os.cpu_count()}


def describe(facts: dict) -> str:
    """The facts as lines for a prompt or a terminal."""
    lines = [f"device: {facts.get('device_name')}"]
    if "capability" in facts:
        lines.append(f"compute capability {facts['capability']}, {facts['sm_count']} SMs, {facts['memory_gb']} GB")
    if facts.get("l2_mb"):
        lines.append(f"L2 cache: {facts['l2_mb']} MB")
    if facts.get("memory_bandwidth_bytes_per_s"):
        lines.append(f"peak memory bandwidth: {facts['memory_bandwidth_bytes_per_s'] / 1e9:.0f} GB/s")
    if facts.get("fp32_flops_per_s"):
        lines.append(f"peak fp32 (non-tensor): {facts['fp32_flops_per_s'] / 1e12:.1f} TFLOP/s")
    if facts.get("cores"):
        lines.append(f"{facts['cores']} CPU cores (kernels run under the Triton interpreter or as C++)")
    return "\n".join(lines)
