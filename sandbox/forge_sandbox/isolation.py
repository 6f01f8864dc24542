"""Namespaces for the candidate's process: it cannot see or signal forge's processes, reach a network,
or write where forge keeps what it trusts.

The candidate's runner starts under ``unshare`` (util-linux) in new user, PID,
mount and network namespaces, the user mapped to root there (which gives it
nothing outside): inside, it is PID 2 under a reaper (see runner.py), ``/proc``
shows only its own processes, there is no network but a down loopback, and a
process outside (the host, the reference runner, the user's shell) has no PID
it could name. Killing the namespace's first process kills everything in it,
so nothing it starts outlives its evaluation.

Files: before any candidate code runs, the reaper bind-mounts read-only what a
candidate could tamper with to fool a later verdict (the Python installation
with torch, forge's own code, the task's folder, forge's store, the other
runners' files), keeping writable what compilers need (its own folder, the
temp and cache folders); then the serving process moves into a nested user and
mount namespace, where those mounts are locked: it cannot remount them
writable or unmount them. The user's other files keep the user's rights.

Where user namespaces are off (a sysctl, a container's seccomp profile) or
``unshare`` is missing, evaluations go on without them and say so.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import site
import subprocess
import sys

# --kill-child: if unshare itself dies, its child gets SIGKILL; --mount-proc implies a mount namespace.
_NAMESPACES = ["--pid", "--fork", "--kill-child", "--mount-proc", "--net"]
# Root in the namespace keeps the capabilities that the read-only mounts need after exec.
_USER_MAPS = (["--user", "--map-root-user"],)

_probed: tuple[list[str], str | None] | None = None


def isolation_prefix() -> tuple[list[str], str | None]:
    """The command prefix that isolates a process, or ([], why not). Probed once per process."""
    global _probed
    if _probed is None:
        _probed = _probe()
    return _probed


def _probe() -> tuple[list[str], str | None]:
    unshare = shutil.which("unshare")
    if unshare is None:
        return [], "unshare (util-linux) is not installed"
    error = ""
    for user_map in _USER_MAPS:
        prefix = [unshare, *user_map, *_NAMESPACES]
        try:
            done = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return [], f"unshare could not run ({exc})"
        if done.returncode == 0:
            return prefix, None
        error = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return [], f"user namespaces are not available here ({error[:200]})"


# -- read-only mounts -----------------------------------------------------------------------

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT = 1, 2, 4, 8, 32
_MS_NOATIME, _MS_NODIRATIME, _MS_BIND, _MS_REC, _MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 21
_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000


def protected_paths(task: str, eval_workdir: str, extra: list[str]) -> list[str]:
    """What a candidate could rewrite to change later verdicts: Python and its packages (torch),
    forge's code, the task's folder, this evaluation's folder, and what the caller adds (forge's store)."""
    import forge_sandbox

    paths = [sys.prefix, sys.base_prefix, *site.getsitepackages()]
    paths.append(os.path.dirname(os.path.dirname(os.path.abspath(forge_sandbox.__file__))))
    paths += [os.path.dirname(os.path.abspath(task)), eval_workdir, *extra]
    return _existing(paths)


def writable_paths(own_workdir: str) -> list[str]:
    """What a candidate's build and run must write: its folder, temp files and the compilers' caches."""
    home = os.path.expanduser("~")
    paths = [own_workdir, "/tmp", "/var/tmp", os.environ.get("TMPDIR", "")]
    paths += [os.path.join(home, name) for name in (".cache", ".triton", ".nv", ".cupy")]
    paths += [os.environ.get(name, "") for name in ("TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "CUPY_CACHE_DIR")]
    paths += [os.environ.get("XDG_CACHE_HOME", "")]
    return _existing(paths)


def _existing(paths: list[str]) -> list[str]:
    seen: list[str] = []
    for path in paths:
        if path and os.path.isdir(path):
            real = os.path.realpath(path)
            if real != "/" and real not in seen:
                seen.append(real)
    return seen


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    libc.unshare.argtypes = [ctypes.c_int]
    return libc


def _mount(libc, source: str | None, target: str, flags: int) -> None:
    if libc.mount(source.encode() if source else None, target.encode(), None, flags, None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), target)


def _kept_flags(path: str) -> int:
    """The flags a remount must repeat: in a user namespace they are locked to the original's."""
    f = os.statvfs(path).f_flag
    flags = f & (_MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_NOATIME | _MS_NODIRATIME)
    return flags | (_MS_RELATIME if f & 4096 else 0)


def restrict_files(protect: list[str], writable: list[str]) -> None:
    """Bind ``protect`` read-only, ``writable`` staying writable inside them. Raises OSError."""
    libc = _libc()
    protect = [p for p in protect if p not in writable]  # a folder that is both stays writable
    # Writable places first: the recursive read-only binds below carry them along as they are.
    for path in writable:
        if any(path == p or path.startswith(p + os.sep) for p in protect):
            _mount(libc, path, path, _MS_BIND | _MS_REC)
    for path in sorted(protect, key=len):
        _mount(libc, path, path, _MS_BIND | _MS_REC)
        _mount(libc, None, path, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _kept_flags(path))


def lock_mounts() -> None:
    """Move into a nested user and mount namespace: the mounts made above become locked there."""
    libc = _libc()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", "0 0 1"), ("gid_map", "0 0 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


# -- inside the namespaces ------------------------------------------------------------------


def settle(protect: list[str], writable: list[str], *fds: int) -> str:
    """Run first thing in a process that is PID 1 of its namespaces: make ``protect`` read-only,
    fork (this process stays behind as the reaper), lock the mounts in the child, which returns
    and goes on. ``fds`` are closed in the reaper. Returns what was achieved, as one line."""
    files = _restrict(protect, writable)
    _become_reaper(*fds)
    if files.startswith("read-only"):
        try:
            lock_mounts()
        except OSError as exc:  # without the lock the candidate could remount them writable
            files = f"not restricted: the mounts could not be locked ({exc.strerror})"
    return files


def _restrict(protect: list[str], writable: list[str]) -> str:
    if not protect:
        return "not restricted: nothing to protect"
    try:
        restrict_files(protect, writable)
    except OSError as exc:
        return f"not restricted: {exc.strerror} ({exc.filename})"
    return f"read-only: {len(protect)} folders"


def _become_reaper(*fds: int) -> None:
    """As PID 1 of a PID namespace a process ignores signals it has no handler for, even its own
    SIGSEGV or SIGABRT. So PID 1 forks: the child goes on, and PID 1 only waits, reporting a death
    by signal N as exit status 128 + N (host.py reads it back)."""
    child = os.fork()
    if child == 0:
        return
    for fd in fds:  # the host must see the pipes close when the working child dies
        os.close(fd)
    while True:
        try:
            pid, status = os.waitpid(child, 0)
        except InterruptedError:
            continue
        if pid == child:
            break
    os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
