"""What a candidate's code writes, removes or changes in the file system beyond its own build caches and
the temporary files it made itself.

In its namespaces a candidate sees the machine's files read-only, and what it writes lands on private
folders that go with it, so nothing it does to the file system reaches the host or a later evaluation,
and no failed write shows. The same code imported from an exported module runs with the user's rights:
a kernel whose import removed a folder and left a file writable by all passed (a review, 2026-12-01: in
the sandbox the folder was not there to remove). So the candidate's runner installs an audit hook before
the candidate is imported (:class:`FileWatch`; Python's audit hooks cannot be removed) and records every
write, removal, rename, permission, owner or time change that Python's own functions make (``open`` for
writing, ``os.remove``, ``shutil.rmtree``, ``os.chmod``...) of a path outside the folders a build may
write (the compilers' caches forge hands it) and the temporary files and folders the process made itself
through ``tempfile`` (a kernel built from a file it wrote, in a folder of its own, is fine). Bytecode
written by the import system into ``__pycache__`` is Python's own. The host rejects a candidate that
did any of these (benchmark.runner_evidence_problem). Native code reaches the file system without
Python's events: the host reads what the candidate's extensions import (native_code), and a C library
call that opens, removes or changes files is refused there.
"""

from __future__ import annotations

import os
import sys
import tempfile

MAX_FOUND = 8
# Audit events of the calls that change files, and which of their arguments name a path they change;
# (the argument's place, the place of its dir_fd or None).
_CHANGES = {
    "os.remove": ((0, 1),),
    "os.rmdir": ((0, 1),),
    "os.rename": ((0, 2), (1, 3)),
    "os.truncate": ((0, None),),
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.utime": ((0, 3),),
    "os.link": ((1, 3),),
    "os.symlink": ((1, 2),),
    "os.chflags": ((0, None),),
    "os.lchflags": ((0, None),),
    "os.setxattr": ((0, None),),
    "os.removexattr": ((0, None),),
    "shutil.rmtree": ((0, 1),),
    "shutil.move": ((0, None), (1, None)),
    "shutil.copyfile": ((1, None),),
    "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),),
    "shutil.chown": ((0, None),),
}
_MADE = {"tempfile.mkdtemp", "tempfile.mkstemp"}
_DISCARDS = ("/dev/null",)  # where a compiler's subprocess sends what nobody reads (cpp_extension)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class FileWatch:
    """The changes to files outside ``allowed`` folders (and those made through tempfile since), as
    'what: path' lines, the first MAX_FOUND of them; install() once, before the candidate's code runs."""

    def __init__(self, allowed: list[str]) -> None:
        self.allowed = [os.path.join(os.path.realpath(folder), "") for folder in allowed if folder]
        self.found: list[str] = []
        self._inside = False

    def install(self) -> None:
        # Python's own probe for a writable temporary folder (a file made and removed in it) done first, as
        # any process does it once: later, it would read as the candidate's own write
        tempfile.gettempdir()
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple) -> None:
        if self._inside or (event != "open" and event not in _CHANGES and event not in _MADE):
            return
        self._inside = True  # what the hook itself calls raises no event of these, but never loops
        try:
            self._seen(event, args)
        except Exception:  # noqa: BLE001 - an audit hook that raises would break the call it watches
            pass
        finally:
            self._inside = False

    def _seen(self, event: str, args: tuple) -> None:
        if event in _MADE:
            self.allowed.append(os.path.join(os.path.realpath(os.fsdecode(args[0])), ""))
            return
        if event == "open":
            path, mode, flags = args
            writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & _WRITE_FLAGS)
            places = [(path, None)] if writes else []
        else:
            places = [(args[at], args[fd] if fd is not None and fd < len(args) else None) for at, fd in _CHANGES[event]]
        for path, dir_fd in places:
            for where in _resolved(path, dir_fd):
                if not self._permitted(where):
                    if len(self.found) < MAX_FOUND:
                        self.found.append(f"{event if event != 'open' else 'open for writing'}: {where[:200]}")
                    break

    def _permitted(self, path: str) -> bool:
        if path in _DISCARDS or path.startswith(tuple(self.allowed)) or os.path.join(path, "") in self.allowed:
            return True
        # bytecode the import system writes beside a module it imported, from its own frames only
        if "/__pycache__/" in path and _from_the_import_system():
            return True
        return False


def _resolved(path, dir_fd) -> list[str]:
    """The absolute paths an event's argument names (relative to its dir_fd or the working folder): with its
    folder's links resolved, and where the name itself is a link, the file it leads to (a review, 2026-12-02:
    a link made in the candidate's own temporary folder to a user's script, written and chmod'ed through);
    none for a file descriptor (a file already open)."""
    if isinstance(path, int) or path is None:
        return []
    name = os.fsdecode(path)
    if not os.path.isabs(name):
        base = os.readlink(f"/proc/self/fd/{dir_fd}") if isinstance(dir_fd, int) else os.getcwd()
        name = os.path.join(base, name)
    folder, leaf = os.path.split(os.path.normpath(name))
    named = os.path.join(os.path.realpath(folder), leaf)
    led_to = os.path.realpath(named)
    return [named] if led_to == named else [named, led_to]


def _from_the_import_system() -> bool:
    frame = sys._getframe(3)
    while frame is not None:
        if frame.f_code.co_filename == "<frozen importlib._bootstrap_external>":
            return True
        frame = frame.f_back
    return False
