"""torch/extension.h precompiled for C++ candidates: the host builds it once, their compiler finds it.

Parsing torch/extension.h is most of a load_inline build on the CPU: here 23.6 s of a 25 s compile of
one small extension at -O3, 10.6 s with the header precompiled (6.7 s at -O0). GCC looks for
``NAME.gch`` beside each ``NAME`` an ``#include`` names, in each include folder in turn, and where
``NAME.gch`` is a folder it takes the first file there that is valid for the compilation at hand: one
made with the same macros and target options (-O1, -O2 and -O3 count as one; -O0, -fopenmp and
-march=native do not). So the candidate's environment names, through CPATH (searched before the
``-isystem`` folders load_inline gives torch's headers), a folder of forge's own that holds
``torch/extension.h`` (a link to torch's) and ``torch/extension.h.gch/``, with one header per set of
flags that candidates have asked for. A compilation that no header there fits reads torch's header as
before: slower, never different.

Trust: a precompiled header is code that every later C++ candidate compiles in. Only the host builds
one, from torch's own header and from flags of a fixed list (the candidate's source picks among them:
a wrong pick costs time only); the candidate's process sees the folder read-only, and is given it only
when it runs in its namespaces (without them it could rewrite what the next candidate compiles).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import logging
import os
import re
import shutil
import subprocess
import sysconfig
import time

from forge_sandbox import isolation

log = logging.getLogger("forge_sandbox")

BUILD_TIMEOUT_S = 300.0  # one header: about 35 s on two cores
HEADERS_KEPT = 4  # sets of flags kept (each header is about 800 MB), the least recently used dropped first

# The flags of a candidate's extra_cflags that a header is built with: only those that change what the
# header means (macros, the target, the language) and nothing that makes the host's compiler read or
# load a file of the candidate's choosing (-include, -fplugin, -B, @file). Others are left out: at
# worst the header then does not fit and is not used.
_KEPT_FLAGS = re.compile(
    r"-O[0-3sz]?|-Ofast|-fopenmp|-ffast-math|-fno-math-errno|-funsafe-math-optimizations|-fno-exceptions|"
    r"-march=native|-mtune=native|-mavx2?|-mfma|-mf16c|-mavx512(?:f|bw|vl|dq|cd)|-std=(?:c|gnu)\+\+(?:17|20|23)|"
    r"-DNDEBUG|-fno-rtti|-fno-strict-aliasing"
)
_BUILDS_OWN_STANDARD = "-std=c++20"  # what torch.utils.cpp_extension passes every C++ build (torch 2.13)
_QUOTED_FLAGS = re.compile(r"""["'](-[^"'\n]*)["']""")


def flags_in(source: str) -> list[str]:
    """The flags a candidate's source passes its C++ compiler, as far as a header is concerned: every
    quoted string of flags (extra_cflags), kept where _KEPT_FLAGS allows, in order of first appearance.
    Of the -O levels and of the -std standards only the last counts, as in the compiler (in the place
    of the first): -O1 to -O3 as -O2 (one header fits all three), and a last -std=c++20 left out, as
    load_inline passes it itself and every header is built with it, so a candidate that names it again
    needs no header of its own (each is some 800 MB and 35 s of two cores, and HEADERS_KEPT are kept)."""
    flags: list[str] = []
    last: dict[str, str] = {}  # "-O" and "-std=": the last of each
    for found in _QUOTED_FLAGS.finditer(source):
        for word in found.group(1).split():
            if not _KEPT_FLAGS.fullmatch(word):
                continue
            kind = next((k for k in ("-std=", "-O") if word.startswith(k)), None)
            if kind is not None:
                last[kind] = "-O2" if word in ("-O1", "-O2", "-O3", "-O") else word
                word = kind  # its place, filled with the last one below
            if word not in flags:
                flags.append(word)
    if last.get("-std=") == _BUILDS_OWN_STANDARD:
        flags.remove("-std=")
    return [last.get(word, word) for word in flags]


def builds_cpp(source: str) -> bool:
    """Whether the source may build a C++ extension (a hint: a wrong answer costs time, never a verdict)."""
    return "cpp_extension" in source or "load_inline" in source


@functools.lru_cache(maxsize=1)
def _compiler() -> tuple[str, str] | None:
    """torch's C++ compiler (as cpp_extension picks it) and its identity, where it is GCC; else None."""
    compiler = os.environ.get("CXX", "c++")
    path = shutil.which(compiler)
    if path is None:
        return None
    try:
        done = subprocess.run([path, "-v"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    identity = done.stderr.strip().splitlines()[-1:] or [""]
    if "gcc version" not in identity[0]:
        return None  # clang reads a precompiled header only when told to (-include-pch)
    return path, identity[0]


def _torch_paths() -> tuple[str, list[str], str]:
    """torch's include folder, every include folder of a build, and torch's version (GCC does not check
    that a header still matches its source: a torch upgraded in place gets headers of its own)."""
    import torch  # noqa: PLC0415
    import torch.utils.cpp_extension as cpp_extension  # noqa: PLC0415 (only where C++ is built)

    include = cpp_extension.include_paths()
    version = f"{torch.__version__} {getattr(torch.version, 'git_version', '')}"
    return include[0], [*include, sysconfig.get_paths()["include"]], version


def folder(source: str) -> str | None:
    """The folder to put first on the candidate's include path (CPATH) for ``source``, with a header
    built there for its flags if none was; None where the source builds no C++, the compiler is not
    GCC, or no header can be built (forge then goes on without one)."""
    if not builds_cpp(source) or os.environ.get("FORGE_PRECOMPILED_HEADER") == "0":  # "0": off (bench/)
        return None
    compiler = _compiler()
    if compiler is None:
        return None
    try:
        torch_include, includes, version = _torch_paths()
    except Exception:  # noqa: BLE001 (a broken torch install: the candidate's build will say so)
        return None
    header = os.path.join(torch_include, "torch", "extension.h")
    if not os.path.isfile(header):
        return None
    identity = "\n".join([*compiler, header, *includes, version])
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    root = os.path.join(isolation.cache_root(), "headers")
    own = os.path.join(root, key)
    flags = flags_in(source)
    try:
        _build(own, header, compiler[0], includes, flags)
        strays = _strays(own, header)
    except OSError as exc:
        log.info("no precompiled torch/extension.h: %s", exc)
        return None
    if strays:
        # Nothing but forge's own files may lie there: first on the include path, a file of another's
        # (<vector>, a torch/extension.h of its own) would be compiled into every later candidate.
        log.warning("the precompiled headers' folder %s holds what forge did not put there (%s): not used",
                    own, ", ".join(strays[:5]))  # fmt: skip
        return None
    with contextlib.suppress(OSError):
        os.utime(own)
    _prune_keys(root, keep=own)
    return own


def _build(own: str, header: str, compiler: str, includes: list[str], flags: list[str]) -> None:
    gch = os.path.join(own, "torch", "extension.h.gch")
    os.makedirs(gch, exist_ok=True)
    link = os.path.join(own, "torch", "extension.h")
    if not os.path.islink(link):
        with contextlib.suppress(FileExistsError):
            os.symlink(header, link)
    name = hashlib.sha256(" ".join(flags).encode()).hexdigest()[:16]
    built = os.path.join(gch, f"{name}.gch")
    failed = os.path.join(own, f"{name}.failed")
    with open(os.path.join(own, ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another evaluation building the same header: wait for it
        try:
            if os.path.exists(built):
                os.utime(built)
                return
            if os.path.exists(failed) and os.stat(failed).st_mtime > time.time() - 3600:
                return  # tried within the hour (it may have been the machine's load: an hour later, again)
            _drop_least_used(gch, HEADERS_KEPT - 1)
            partial = os.path.join(own, f"{name}.partial")
            # The flags of load_inline's own build, but the extension's name (no header reads it).
            command = [compiler, "-x", "c++-header", header, "-o", partial, "-DTORCH_API_INCLUDE_EXTENSION_H",
                       *(f"-isystem{path}" for path in includes), "-fPIC", _BUILDS_OWN_STANDARD, *flags]  # fmt: skip
            started = time.perf_counter()
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                done = None
            if done is None or done.returncode != 0 or not os.path.exists(partial):
                with open(failed, "w") as f:
                    f.write(done.stderr[-4000:] if done is not None else f"over {BUILD_TIMEOUT_S:.0f} s")
                with contextlib.suppress(OSError):
                    os.unlink(partial)
                return
            os.replace(partial, built)
            log.info(
                "precompiled torch/extension.h for %s in %.1f s", flags or "no flags", time.perf_counter() - started
            )
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _strays(own: str, header: str) -> list[str]:
    """What lies in the folder besides what _build puts there."""
    strays = [e.name for e in os.scandir(own)
              if not (e.name in ("torch", ".lock") or re.fullmatch(r"[0-9a-f]{16}\.(failed|partial)", e.name))]  # fmt: skip
    torch_dir = os.path.join(own, "torch")
    strays += [f"torch/{name}" for name in os.listdir(torch_dir) if name not in ("extension.h", "extension.h.gch")]
    link = os.path.join(torch_dir, "extension.h")
    if not os.path.islink(link) or os.readlink(link) != header:
        strays.append("torch/extension.h")
    gch = os.path.join(torch_dir, "extension.h.gch")
    strays += [f"torch/extension.h.gch/{e.name}" for e in os.scandir(gch)
               if not (re.fullmatch(r"[0-9a-f]{16}\.gch", e.name) and e.is_file(follow_symlinks=False))]  # fmt: skip
    return strays


def _drop_least_used(gch: str, keep: int) -> None:
    entries = sorted(os.scandir(gch), key=lambda e: e.stat().st_mtime, reverse=True)
    for entry in entries[keep:]:
        with contextlib.suppress(OSError):
            os.unlink(entry.path)


def _prune_keys(root: str, keep: str) -> None:
    """Headers of another compiler or torch (an upgrade) go once unused for an hour."""
    hour_ago = time.time() - 3600
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            if entry.path != keep and entry.is_dir(follow_symlinks=False) and entry.stat().st_mtime < hour_ago:
                shutil.rmtree(entry.path, ignore_errors=True)
