"""The compiler flags a load_inline extension may ask for, and those that make its build do more than
compile.

PyTorch writes an extension's extra flags into its build.ninja unquoted, and ninja runs each line
through /bin/sh: a flag holding shell syntax runs a command at the first build, in forge's sandbox and,
once exported, in the user's own process with the user's rights (a review, 2026-12-01: a backquoted
``id > file`` among extra_cflags ran at the exported module's first import). Without any shell, some
options run another program (``-wrapper``, ``-B``, ``-ccbin``, ``-fuse-ld``), load code into the compiler
(``-fplugin``, a specs file, a linker plugin), read more options from a file (``@file``, ``--options-file``) or write files
where the build does not (``-o``, ``-MF``, ``-save-temps``, ``--keep-dir``). A kernel needs none of them.
The static check holds the flags written in the source to :func:`refused` (static_check), and the host
the flags the extension was built with (:func:`refused_in_ninja_file`), however they were made.
"""

from __future__ import annotations

import os
import re

# Shell syntax: command substitution, chaining, redirection, grouping, quoting and globbing (a quote or a
# backslash is allowed only inside a macro's value, -DNAME="text", which PyTorch itself writes).
_SHELL = re.compile(r"[`;|&<>(){}\n\r*?~!#]|\$")
# Options that run another program, load code into a compiler, read options from a file or write files
# elsewhere; with a prefix's spellings (gcc's, nvcc's, the linker's through -Wl, and -Xlinker).
_REFUSED_OPTIONS = (
    "-wrapper", "-fplugin", "-specs", "--specs", "-B", "-ccbin", "--compiler-bindir", "-fuse-ld", "--ld-path",
    "-plugin", "--plugin", "-o", "--output-file", "-MF", "-MD", "-MMD", "-MT", "-MQ", "-save-temps", "-fdump",
    "-fprofile-generate", "-fprofile-dir", "-fprofile-use", "-fcallgraph-info", "--keep", "-keep", "--keep-dir",
    "-keep-dir", "-odir", "--options-file", "-optf", "--dependency-output", "-dumpdir", "-dumpbase", "-aux-info",
    "--dryrun", "-dryrun", "-Xlinker", "-Wl,-plugin", "-Wl,--plugin",
    "-Wl,--dynamic-linker", "-Wl,-dynamic-linker", "-Wl,-T", "-Wl,--script", "-T",
)  # fmt: skip
# Options whose value a compiler passes on to another tool, comma-separated: each of them is a flag too.
_PASSED_ON = ("-Xcompiler", "--compiler-options", "-Xptxas", "--ptxas-options", "-Xnvlink", "--nvlink-options",
              "-Wa,", "-Wp,", "-Xassembler", "-Xpreprocessor")  # fmt: skip
# Those of them that take their value joined to them (-B/usr/evil, -ofile, -fdump-tree-all).
_JOINED = ("-B", "-o", "-T", "-MF", "-MT", "-MQ", "-fdump", "-fplugin")
_MACRO = re.compile(r"-[DU][A-Za-z_][A-Za-z0-9_]*(=.*)?$")
_QUOTED = re.compile(r"'([^'\\]*)'$")  # PyTorch's own --compiler-options '-fPIC' for CUDA


def refused(word: str) -> str:
    """Why one word of a build's flags is refused, or ''."""
    quoted = _QUOTED.match(word)
    if quoted:
        return refused(quoted.group(1))
    if word.startswith("@"):
        return f"{word[:60]!r} reads more options from a file"
    if _MACRO.match(word):
        return f"{word[:60]!r} holds shell syntax" if _SHELL.search(word.partition("=")[2]) else ""
    if _SHELL.search(word) or any(c in word for c in "\"'\\"):
        return f"{word[:60]!r} holds shell syntax"
    for option in _REFUSED_OPTIONS:
        if word == option or word.startswith(option) and (option in _JOINED or word[len(option)] in "=,"):
            return f"{word[:60]!r} runs another program, loads code into the compiler or writes files elsewhere"
    for option in _PASSED_ON:
        if word.startswith(option) and len(word) > len(option):
            for part in word[len(option) :].lstrip("=,").split(","):
                why = refused(part)
                if why:
                    return why
    return ""


def refused_words(words: list[str]) -> list[str]:
    """Why each refused word of a flags list (each item may hold several, space-separated) is refused, and
    the word after a flag that passes it on (-Xcompiler -wrapper)."""
    found = []
    split = [w for item in words for w in str(item).split()]
    for i, word in enumerate(split):
        why = refused(word)
        if not why and word in _PASSED_ON and i + 1 < len(split):
            why = "".join(refused(part) for part in split[i + 1].split(","))
        if why:
            found.append(why)
    return found


# The variables of PyTorch's build.ninja that carry an extension's flags (torch.utils.cpp_extension's
# _write_ninja_file), and ninja's escape of a literal dollar sign.
_FLAG_VARIABLES = ("cflags", "post_cflags", "cuda_cflags", "cuda_post_cflags", "cuda_dlink_post_cflags", "ldflags")


def refused_in_ninja_file(text: str) -> list[str]:
    """Why any flag of a build.ninja's flag variables is refused, PyTorch's own words among them."""
    found = []
    for line in text.splitlines():
        name, equals, value = line.partition("=")
        if not equals or name.strip() not in _FLAG_VARIABLES or line[:1].isspace():
            continue
        words = value.replace("$$", "$").replace("$:", ":").replace("$ ", " ").split()
        found += refused_words(words)
    return found


MAX_BUILDS = 64  # build.ninja files read, one per extension built
MAX_NINJA_BYTES = 2**20


def refused_in_builds(folder: str | None) -> list[str]:
    """Why the flags of any extension built under ``folder`` (the candidate's TORCH_EXTENSIONS_DIR: one
    folder per extension, each with its build.ninja) are refused; read without following links, bounded."""
    found: list[str] = []
    try:
        names = sorted(os.listdir(folder))[:MAX_BUILDS] if folder else []
    except OSError:
        return []
    for name in names:
        try:
            fd = os.open(os.path.join(folder, name, "build.ninja"), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not os.path.isfile(f"/proc/self/fd/{fd}"):
                continue
            text = os.read(fd, MAX_NINJA_BYTES).decode("utf-8", "replace")
        finally:
            os.close(fd)
        found += [f"{name[:60]!r}: {why}" for why in dict.fromkeys(refused_in_ninja_file(text))]
    return found[:8]
