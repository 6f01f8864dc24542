"""A candidate's C++/CUDA source as its compiler reads it: comments left out (:func:`without_comments`)
and macros expanded (:func:`expansions`), for the static check. Names can be pasted together by
macros (``#define J(a, b) a##b`` and ``J(dl, open)``, or a header's own pasting macro such as
``C10_CONCATENATE``), which no reading of the text finds.

The real preprocessor expands them, with the macros PyTorch's extension header defines (dumped
once per process with ``-dM``) but reading no file the candidate names: its ``#include`` lines are
dropped (after digraphs, spliced lines and comments are undone, so that none hides one), and
``__has_include`` is false. Which branch of an ``#if`` the real build takes, and which of several
definitions of a macro it sees, depend on flags the check cannot know, so the source is read
several ways: as a C++ build, as the CUDA compiler's host pass, and with every branch of its
conditionals at once, once per definition of the macros it defines more than once.

This is a speed bump like the rest of the static check: Python can build any source at run time.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import os
import re
import resource
import secrets
import shlex
import shutil
import signal
import subprocess
import sysconfig
import tempfile
import time
from pathlib import Path

# Expansion is milliseconds for any honest source, and its output about the size of the source (a
# dispatch macro makes ten times its own); more is a macro bomb. The bounds hold for all of one check's
# readings together (OUTPUT_BASE and OUTPUT_PER_CHAR of each reading's source, MAX_OUTPUT at most): the
# host reads what the preprocessor writes, in its own process.
TIMEOUT_S = 10.0
MAX_OUTPUT = 8 << 20
OUTPUT_PER_CHAR = 64
OUTPUT_BASE = 256 << 10
MAX_MEMORY = 2 << 30
MAX_DEFINITIONS = 4  # readings of one macro's definitions (an X-macro is defined two or three times)
NO_COMPILER = "could not be read as its preprocessor expands it (no C++ compiler or PyTorch headers here)"

# In C++ source, in the order its compiler's lexer takes them: a raw string, a string or character
# literal, a number (with C++14's digit separators: 1'000), each kept whole so that a "//" or "/*"
# inside one starts no comment; or a comment. One left open runs to the end, as its compiler reads it
# (and so that a source full of openings is read once, not once per opening).
_RAW_STRING = r'(?<!\w)(?:u8|[uUL])?R"([^()\\\s]{0,16})\((?:.*?\)\1"|.*\Z)'
_LITERAL_OR_COMMENT = re.compile(
    r"""(?:(?<!\w)(?:u8|[uUL]))?"(?:\\.|[^"\\\n])*"|(?:(?<!\w)(?:u8|[uUL]))?'(?:\\.|[^'\\\n])*'"""
    r"""|(?<![\w.])\.?\d(?:[eEpP][+-]|['\w.])*|//[^\n]*|/\*.*?(?:\*/|\Z)""",
    re.DOTALL,
)
_TOKEN = re.compile(_RAW_STRING + "|" + _LITERAL_OR_COMMENT.pattern, re.DOTALL)
_RAW_STRINGS = re.compile(_RAW_STRING, re.DOTALL)
_SPLICE = re.compile(r"\\[ \t]*\n")


def without_comments(value: str) -> str:
    """C++ source with its lines spliced and its comments left out, as its compiler's lexer reads it:
    a literal keeps what it holds (a comment opener in one opens nothing), and so does a raw string,
    backslash-newlines too. Whether a raw string's opener is one depends on what came before it (in a
    comment it opens nothing), so where splicing inside and outside raw strings reads differently,
    both readings are returned, one after the other: nothing either shows is hidden."""
    value = value.replace("%:", "#")  # the digraph of # (and %:%: of ##)
    everywhere = _lexed(_SPLICE.sub("", value))
    pieces, at = [], 0
    for raw in _RAW_STRINGS.finditer(value):
        pieces += [_SPLICE.sub("", value[at : raw.start()]), raw.group()]
        at = raw.end()
    outside_raw_strings = _lexed("".join(pieces) + _SPLICE.sub("", value[at:]))
    return everywhere if everywhere == outside_raw_strings else everywhere + "\n" + outside_raw_strings


def _lexed(spliced: str) -> str:
    out, at = [], 0
    for token in _TOKEN.finditer(spliced):
        text = token.group()
        out += [spliced[at : token.start()], " " if text.startswith("/") else text]
        at = token.end()
    out.append(spliced[at:])
    return "".join(out)


_FILE_DIRECTIVE = re.compile(
    r"^[ \t]*#[ \t]*(?:include|include_next|import|embed|pragma[ \t]+GCC[ \t]+dependency)\b.*$", re.MULTILINE
)
_FILE_PROBE = re.compile(r"\b__has_(?:include|include_next|embed)\b")
_OPENING = re.compile(r"^[ \t]*#[ \t]*if", re.MULTILINE)
_CONDITIONAL = re.compile(
    r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|error|warning)\b.*$", re.MULTILINE
)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*(?:define|undef)[ \t]+(\w+).*$", re.MULTILINE)
# Registration macros whose own expansion reaches Python's attributes and the dispatcher's keys, as an
# honest extension's does: read as inert declarations, so that their bodies are read and their
# internals are not. Registering under ``aten`` (PyTorch's own operators) shows as ``forge_library_aten``.
_PROLOGUE = """
#define forge_has_file(...) 0
#undef PYBIND11_MODULE
#define PYBIND11_MODULE(name, variable, ...) void forge_pybind11_module(::pybind11::module_ &variable)
#undef TORCH_LIBRARY
#define TORCH_LIBRARY(ns, m) void forge_library_##ns(torch::Library &m)
#undef TORCH_LIBRARY_FRAGMENT
#define TORCH_LIBRARY_FRAGMENT(ns, m) void forge_library_##ns(torch::Library &m)
#undef TORCH_LIBRARY_IMPL
#define TORCH_LIBRARY_IMPL(ns, k, m) void forge_library_##ns(torch::Library &m)
#undef TORCH_SELECTIVE_SCHEMA
#define TORCH_SELECTIVE_SCHEMA(s) s
#undef TORCH_SELECTIVE_NAME
#define TORCH_SELECTIVE_NAME(n) n
#undef Py_BEGIN_ALLOW_THREADS
#define Py_BEGIN_ALLOW_THREADS {
#undef Py_END_ALLOW_THREADS
#define Py_END_ALLOW_THREADS }
"""
REGISTERS_UNDER_ATEN = "forge_library_aten"
_BUILD = ["-DTORCH_EXTENSION_NAME=forge_extension", "-DTORCH_API_INCLUDE_EXTENSION_H", "-D_GLIBCXX_USE_CXX11_ABI=1"]
_CUDA_HOST = ["-D__CUDACC__", "-D__NVCC__"]
# A compiler flag that defines or undefines a macro, as extra_cflags may pass one.
_MACRO_FLAG = re.compile(r"-[DU]\s*[A-Za-z_]\w*(?:\([^)]*\))?(?:=.*)?", re.DOTALL)


def _compiler() -> str | None:
    return shutil.which("g++") or shutil.which("c++")


def _environment() -> dict:
    """The preprocessor's environment: none of the host's variables that steer it (CPATH,
    GCC_EXEC_PREFIX, DEPENDENCIES_OUTPUT, which writes a file)."""
    return {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}


_HEADER_MACROS: list[str] = []  # the dump, once it was made (a failure is tried again next time)


def _header_macros() -> str | None:
    """Every macro that ``torch/extension.h`` and what it includes define, or None without a compiler
    or PyTorch's headers."""
    if _HEADER_MACROS:
        return _HEADER_MACROS[0]
    compiler = _compiler()
    if compiler is None:
        return None
    try:
        from torch.utils.cpp_extension import include_paths

        includes = [*include_paths(), sysconfig.get_paths()["include"]]
    except Exception:
        return None
    command = [compiler, "-E", "-dM", "-x", "c++", "-std=c++17", *[f"-I{p}" for p in includes], *_BUILD, "-"]
    try:
        done = subprocess.run(command, input="#include <torch/extension.h>\n", capture_output=True, text=True,
                              timeout=120, env=_environment())  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or not done.stdout:
        return None
    _HEADER_MACROS.append(done.stdout)
    return done.stdout


def compiler_flags(strings: list[str]) -> tuple[list[str], list[str]]:
    """Among a candidate's strings (its extra_cflags), the flags that define or undefine a macro, for
    the readings, and those that hand its compiler a file to read first (-include, -imacros). Each
    string is split as the shell splits the build's command line (PyTorch joins the flags with
    spaces): "-O3 -DJ=a##b" and "-D", "J=a##b" define J too."""
    words = [word for s in strings for word in _shell_words(s)]
    defines, files = [], []
    for i, word in enumerate(words):
        if word in ("-D", "-U") and i + 1 < len(words):
            word += words[i + 1]
        if _MACRO_FLAG.fullmatch(word):
            defines.append(word)
        elif word.startswith(("-include", "-imacros")):
            files.append(word)
    return defines, files


def _shell_words(s: str) -> list[str]:
    try:
        return shlex.split(s)
    except ValueError:  # an unbalanced quote: no shell would run it, but read the words anyway
        return s.split()


def _readings(source: str, flags: list[str]) -> dict[str, tuple[str, list[str]]]:
    """Each way to read ``source``: its name, the text and the flags."""
    readings = {
        "as a C++ build": (source, flags),
        "as the CUDA compiler's host pass": (source, [*flags, *_CUDA_HOST]),
    }
    every_branch = _CONDITIONAL.sub("", source)
    lines = every_branch.split("\n")
    definitions: dict[str, list[int]] = {}  # macro -> the lines that define or undefine it
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    for found in _DEFINE.finditer(every_branch):
        definitions.setdefault(found.group(1), []).append(bisect.bisect_right(starts, found.start()) - 1)
    several = {name: at for name, at in definitions.items() if len(at) > 1}
    rounds = min(MAX_DEFINITIONS, max((len(at) for at in several.values()), default=1))
    for k in range(rounds):
        kept = list(lines)
        for at in several.values():
            for i, line in enumerate(at):
                if i != min(k, len(at) - 1):
                    kept[line] = ""
        name = "with every branch of its conditionals" + (f", definition {k + 1} of each" if rounds > 1 else "")
        readings[name] = ("\n".join(kept), flags)
    return readings


def expansions(texts: list[str], flags: list[str] | None = None) -> dict[str, str] | str:
    """Each of ``texts`` (C++ source put together in several ways) expanded in each reading, named by
    the reading; or why they could not all be read to their end: no compiler or headers to expand with
    (NO_COMPILER: then no C++ builds here either), a macro bomb, or a source that stops its
    preprocessor early (a fatal error: every reading must reach a mark put after the source)."""
    compiler, macros = _compiler(), _header_macros()
    if compiler is None or macros is None:
        return NO_COMPILER
    deadline = time.monotonic() + TIMEOUT_S
    allowed, read = OUTPUT_BASE, 0
    out: dict[str, str] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    with tempfile.TemporaryDirectory(prefix="cpp-") as tmp:
        prologue, src, expanded = Path(tmp) / "prologue.h", Path(tmp) / "source.cpp", Path(tmp) / "expanded.ii"
        prologue.write_text(macros + _PROLOGUE)
        for text in texts:
            source = _FILE_PROBE.sub("forge_has_file", _FILE_DIRECTIVE.sub("", without_comments(text)))
            for reading, (body, reading_flags) in _readings(source, list(flags or ())).items():
                if (body, tuple(reading_flags)) in seen:
                    continue
                seen.add((body, tuple(reading_flags)))
                allowed += OUTPUT_PER_CHAR * len(body)
                output_left = min(allowed, MAX_OUTPUT) - read
                end = f"forge_read_to_here_{secrets.token_hex(8)}"
                # Conditionals left open are closed before the mark (a Python string "# if ..." reads as one).
                closing = "\n#endif" * len(_OPENING.findall(body))
                src.write_bytes(f"{body}{closing}\n{end}\n".encode("utf-8", "surrogatepass"))
                command = [compiler, "-E", "-P", "-w", "-x", "c++", "-std=c++17", *_BUILD, *reading_flags, "-include",
                           str(prologue), str(src)]  # fmt: skip
                with open(expanded, "wb") as sink:  # not -o: removed on an error
                    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sink,
                                               stderr=subprocess.DEVNULL, cwd=tmp, env=_environment(),
                                               start_new_session=True,
                                               preexec_fn=functools.partial(_limits, output_left))  # fmt: skip
                    try:
                        process.wait(timeout=max(0.0, deadline - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        return f"takes more than {TIMEOUT_S:.0f} s to expand (a macro bomb)"
                    finally:
                        _stop(process)
                size = expanded.stat().st_size
                if size >= output_left or process.returncode < 0:
                    return (
                        f"expands past {MAX_MEMORY >> 30} GiB of memory or the output this check reads (a macro bomb)"
                    )
                read += size
                code = expanded.read_text(errors="replace")
                if end not in code:
                    # An error is no finding (a Python string with a line "# Notes" in it is no directive),
                    # but one that stops the preprocessor (a missing dependency, memory) leaves the rest unread.
                    return "stops its preprocessor before the end (a fatal error, or out of memory): the rest would go unread"
                out.setdefault(reading, "")
                out[reading] += code.replace(end, "") + "\n"
    return out


def _limits(output: int) -> None:
    """In the preprocessor's process: its output file, its memory and its CPU time bounded (a macro bomb)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (output, output))
    resource.setrlimit(resource.RLIMIT_AS, (MAX_MEMORY, MAX_MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (int(TIMEOUT_S) + 1, int(TIMEOUT_S) + 1))


def _stop(process: subprocess.Popen) -> None:
    """The compiler driver and what it started (cc1plus), whatever state they are in. Its process group
    outlives the driver while cc1plus runs, so it is killed before the driver is reaped (after that,
    its number could be another's)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    process.wait()
