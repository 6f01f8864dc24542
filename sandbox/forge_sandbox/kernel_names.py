"""Telling the candidate's own kernels from library kernels, by function name.

The static check extracts the names a candidate's source defines (Triton
functions, CUDA ``__global__`` functions, CuPy kernels); the profilers report
launched kernels in their own forms. Both the torch.profiler census and the
Nsight Compute filter use the rule here.
"""

from __future__ import annotations

import re

# Triton before 3.0 appended a specialization suffix to the function's name (`kernel_0d1d2de`).
_TRITON_SUFFIX = re.compile(r"_(?:\d+[cde]+)+$")


def function_name(name: str) -> str:
    """A kernel's bare function name from the profilers' forms: `void ns::k<float, 4>(float*, int)` -> `k`."""
    depth, bare = 0, []
    for ch in name.split("(", 1)[0]:  # the parameter list goes first
        depth += (ch == "<") - (ch == ">")
        if depth == 0 and ch != ">":
            bare.append(ch)
    words = "".join(bare).split()
    return words[-1].rsplit("::", 1)[-1] if words else ""


def is_own_kernel(name: str, own_names: list[str]) -> bool:
    """Whether a launched kernel is one the candidate's source defines: the same function name exactly.

    Exact, not a substring: a candidate kernel named `kernel` or `layer_norm_kernel` must not
    claim PyTorch's `vectorized_layer_norm_kernel`. A name the candidate shares with a library
    kernel cannot be told apart this way.
    """
    bare = function_name(name)
    return any(n and (bare == n or _TRITON_SUFFIX.sub("", bare) == n) for n in own_names)


def ncu_name_regex(own_names: list[str]) -> str:
    """The same rule as ncu's `-k regex:` (which searches, so it is anchored) on function base names."""
    names = "|".join(sorted(set(own_names)))
    return f"^(?:.*::)?(?:{names})(?:_(?:\\d+[cde]+)+)?$"
