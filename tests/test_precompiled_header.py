"""torch/extension.h precompiled by the host for C++ candidates (precompiled_header)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from forge_sandbox import precompiled_header

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler")


def test_a_header_is_built_only_with_flags_that_change_it_and_read_no_file():
    source = 'load_inline(name="k", cpp_sources=S, extra_cflags=["-O3 -march=native", "-fplugin=/tmp/x.so"])\n'
    source += "flags = ['-include', '/etc/passwd', '-O1', '-fopenmp', '@/tmp/args', '-B/tmp']"
    # -O1 to -O3 are one header; a plugin, a file to include or read arguments from never reach the host's compiler
    assert precompiled_header.flags_in(source) == ["-O2", "-march=native", "-fopenmp"]
    # load_inline's own standard, named again, needs no header of its own; another standard does
    assert precompiled_header.flags_in('extra_cflags=["-O3", "-std=c++20"]') == ["-O2"]
    assert precompiled_header.flags_in('extra_cflags=["-O3", "-std=c++17"]') == ["-O2", "-std=c++17"]
    # of the levels and the standards, the last counts, as in the compiler (review of the above: a header
    # was built for the first)
    assert precompiled_header.flags_in('extra_cflags=["-std=c++17", "-std=c++20"]') == []
    assert precompiled_header.flags_in('extra_cflags=["-std=c++20 -O3", "-std=c++17"]') == ["-std=c++17", "-O2"]
    assert precompiled_header.flags_in('extra_cflags=["-O3 -march=native -O0"]') == ["-O0", "-march=native"]
    assert precompiled_header.folder("import triton\n") is None  # no C++ built: nothing to do


def test_load_inline_compiles_against_the_hosts_header(tmp_path):
    # The folder a C++ candidate's CPATH names, with the header for its flags; g++ -H marks a precompiled
    # header it used with "!": the build load_inline runs takes it instead of parsing torch's headers.
    source = 'load_inline(name="pch_probe", cpp_sources=SRC, functions=["twice"], extra_cflags=["-O3"])'
    folder = precompiled_header.folder(source)
    assert folder is not None
    assert os.listdir(os.path.join(folder, "torch", "extension.h.gch")), "no header was built"
    probe = (
        "from torch.utils.cpp_extension import load_inline\n"
        "SRC = 'torch::Tensor twice(torch::Tensor x) { return x + x; }'\n"
        f"m = load_inline(name='pch_probe', cpp_sources=SRC, functions=['twice'], extra_cflags=['-O3', '-H'],"
        f" build_directory={str(tmp_path)!r}, verbose=True)\n"
        "import torch; assert torch.equal(m.twice(torch.ones(3)), torch.full((3,), 2.0))\n"
    )
    env = {**os.environ, "CPATH": folder}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    used = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("! ")]
    assert used and used[0].startswith(f"! {folder}"), (done.stdout + done.stderr)[-3000:]
    # A file forge did not put there (first on the include path, it would be compiled into every later
    # candidate): the folder is not given out
    stray = os.path.join(folder, "vector")
    with open(stray, "w") as f:
        f.write("#error planted\n")
    try:
        assert precompiled_header.folder(source) is None
    finally:
        os.unlink(stray)
    assert precompiled_header.folder(source) == folder
