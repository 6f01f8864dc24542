"""What the agents get from a compile: ptxas's kernel report, and the compiler's first error line."""

from __future__ import annotations

from conftest import TESTS
from forge_sandbox.evidence import ptxas_lines
from forge_sandbox.sides import _compiler_error_line


def test_ptxas_report_is_kept_from_a_build_log():
    # recorded with nvcc 13.0 on this project's machine; see the file's first line
    log = (TESTS / "fixtures" / "ptxas_build.log").read_text()
    lines = ptxas_lines(log).splitlines()
    assert any("Used 8 registers" in line and "1024 bytes smem" in line for line in lines)
    assert any("0 bytes spill stores" in line for line in lines)
    assert not any(line.startswith("[") for line in lines)


def test_compiler_error_line_drops_the_build_path():
    log = "[1/2] c++ -c main.cpp\nFAILED: main.o\n/tmp/ext/x/main.cpp:5:14: error: expected ';' before '}' token\n"
    assert _compiler_error_line(log) == "main.cpp:5:14: error: expected ';' before '}' token"
