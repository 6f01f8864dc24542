"""A candidate's C++/CUDA source as its compiler reads it once the macros are expanded, for the
static check: names can be pasted together by macros (``#define J(a, b) a##b`` and ``J(dl, open)``,
or a header's own pasting macro such as ``C10_CONCATENATE``), which no reading of the text finds.

The real preprocessor expands them, with the macros PyTorch's extension header defines (dumped
once per process with ``-dM``) but reading no file the candidate names: its ``#include`` lines are
dropped, so expanding takes milliseconds and opens nothing. Three readings, since which branch of
an ``#if`` the real build takes depends on flags the check cannot know: as a C++ build, as the CUDA
compiler's host pass, and with every branch of the candidate's own conditionals at once. A pasting
macro that the candidate defines more than once (one definition per branch) is a finding of its
own: the third reading sees only the last.
"""

from __future__ import annotations

import functools
import re
import resource
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

# Expansion is milliseconds for any honest source; more is a macro bomb.
TIMEOUT_S = 10.0
MAX_OUTPUT = 8 << 20
MAX_MEMORY = 2 << 30

_FILE_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(?:include|include_next|import|embed)\b.*$", re.MULTILINE)
_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b.*$", re.MULTILINE)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(.*)$", re.MULTILINE)
# Registration macros whose own expansion reaches Python's attributes and the dispatcher's keys, as an
# honest extension's does: read as inert declarations, so that their bodies are read and their
# internals are not. Registering under ``aten`` (PyTorch's own operators) shows as ``forge_library_aten``.
_INERT_REGISTRATION = """
#undef PYBIND11_MODULE
#define PYBIND11_MODULE(name, variable, ...) void forge_pybind11_module(::pybind11::module_ &variable)
#undef TORCH_LIBRARY
#define TORCH_LIBRARY(ns, m) void forge_library_##ns(torch::Library &m)
#undef TORCH_LIBRARY_FRAGMENT
#define TORCH_LIBRARY_FRAGMENT(ns, m) void forge_library_##ns(torch::Library &m)
#undef TORCH_LIBRARY_IMPL
#define TORCH_LIBRARY_IMPL(ns, k, m) void forge_library_##ns(torch::Library &m)
"""
REGISTERS_UNDER_ATEN = "forge_library_aten"
_BUILD = ["-DTORCH_EXTENSION_NAME=forge_extension", "-DTORCH_API_INCLUDE_EXTENSION_H", "-D_GLIBCXX_USE_CXX11_ABI=1"]
_READINGS = {
    "as a C++ build": [],
    "as the CUDA compiler's host pass": ["-D__CUDACC__", "-D__NVCC__"],
    "with every branch of its conditionals": [],
}


def _compiler() -> str | None:
    return shutil.which("g++") or shutil.which("c++")


@functools.cache
def _header_macros() -> str:
    """Every macro that ``torch/extension.h`` and what it includes define ("" without a compiler or
    PyTorch's headers: then the candidate's own macros are expanded, and the headers' are not)."""
    compiler = _compiler()
    if compiler is None:
        return ""
    try:
        from torch.utils.cpp_extension import include_paths

        includes = [*include_paths(), sysconfig.get_paths()["include"]]
    except Exception:
        return ""
    command = [compiler, "-E", "-dM", "-x", "c++", "-std=c++17", *[f"-I{p}" for p in includes], *_BUILD, "-"]
    try:
        done = subprocess.run(command, input="#include <torch/extension.h>\n", capture_output=True, text=True,
                              timeout=120)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout if done.returncode == 0 else ""


def pasting_macros_defined_twice(text: str) -> list[str]:
    """Macros of the candidate's that paste tokens (``##``) and are defined more than once, differently."""
    definitions: dict[str, set[str]] = {}
    for name, body in _DEFINE.findall(text):
        definitions.setdefault(name, set()).add(body.strip())
    return sorted(name for name, bodies in definitions.items() if len(bodies) > 1 and any("##" in b for b in bodies))


def expansions(text: str) -> dict[str, str] | str:
    """``text`` (C++ without its comments) expanded in each reading (_READINGS), or why it could not be."""
    compiler = _compiler()
    if compiler is None:
        return {}
    source = _FILE_DIRECTIVE.sub("", text)
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="forge-cpp-") as tmp:
        macros, src, expanded = Path(tmp) / "macros.h", Path(tmp) / "source.cpp", Path(tmp) / "expanded.ii"
        macros.write_text(_header_macros() + _INERT_REGISTRATION)
        for reading, flags in _READINGS.items():
            src.write_text(_CONDITIONAL.sub("", source) if reading.startswith("with every branch") else source)
            command = [compiler, "-E", "-P", "-w", "-x", "c++", "-std=c++17", *_BUILD, *flags, "-include",
                       str(macros), str(src), "-o", str(expanded)]  # fmt: skip
            try:
                done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, timeout=TIMEOUT_S, cwd=tmp,
                                      preexec_fn=_limits)  # fmt: skip
            except subprocess.TimeoutExpired:
                return f"its macros take more than {TIMEOUT_S:.0f} s to expand"
            except OSError as exc:
                return f"its macros could not be expanded ({type(exc).__name__})"
            if done.returncode < 0 or not expanded.exists() or expanded.stat().st_size >= MAX_OUTPUT:
                return f"its macros could not be expanded within {MAX_OUTPUT >> 20} MiB"
            out[reading] = expanded.read_text(errors="replace")
    return out


def _limits() -> None:
    """In the preprocessor's process: its output file and its memory bounded (a macro bomb)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_OUTPUT, MAX_OUTPUT))
    resource.setrlimit(resource.RLIMIT_AS, (MAX_MEMORY, MAX_MEMORY))
