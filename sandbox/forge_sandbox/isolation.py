"""Namespaces for the candidate's process: it cannot see or signal forge's processes, reach a network,
or write anything but its own folder, temp files and the compilers' caches.

The candidate's runner starts under ``unshare`` (util-linux) in new user, PID,
mount and network namespaces, the user mapped to root there (which gives it
nothing outside): inside, it is PID 2 under a reaper, ``/proc`` shows only its
own processes, there is no network but a down loopback, and a process outside
(the host, the reference runner, the user's shell) has no PID it could name.
Killing the namespace's first process kills everything in it, so nothing it
starts outlives its evaluation.

Files (``settle``, run by the reaper before any candidate code): every mount
is made read-only, so that nothing a later verdict trusts can change (the
Python installation with torch, forge's code and store, tasks, anything on the
path); fresh private tmpfs cover /tmp, /var/tmp, /dev/shm and /run, which hides
other evaluations' folders and the sockets kept there; then its own folder and
the compilers' caches are bound back writable and what it must read (the
reference's saved inputs, its own source) read-only. The serving process then
moves into a nested user and mount namespace, where all of it is locked: it
cannot remount, unmount or move those mounts.

Where user namespaces are off (a sysctl, a container's seccomp profile) or
``unshare`` is missing, evaluations go on without them and say so.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
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


# -- the file system inside ----------------------------------------------------------------

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT = 1, 2, 4, 8, 32
_MS_NOATIME, _MS_NODIRATIME, _MS_BIND, _MS_RELATIME = 1024, 2048, 4096, 1 << 21
_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000

HIDDEN = ("/tmp", "/var/tmp", "/dev/shm", "/run")  # replaced by empty private tmpfs inside
_LEFT_AS_THEY_ARE = ("/proc", "/sys", "/dev")  # kernel interfaces and device nodes (CUDA opens /dev/nvidia*)
CACHE_VARIABLES = ("TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "CUPY_CACHE_DIR", "CUDA_CACHE_PATH", "XDG_CACHE_HOME")


CACHES_KEPT = 64  # candidates whose compiled builds stay cached


def cache_environment(key: str) -> dict[str, str]:
    """Where the candidate's compilers keep their caches: the user's choice where set, otherwise
    folders of forge's own, one set per candidate source (``key``), so that no candidate can plant
    a build that another one's source would load (the rest of the home folder is read-only inside)."""
    root = os.path.join(os.path.expanduser("~"), ".cache", "forge-sandbox")
    own = os.path.join(root, key)
    env = {}
    for name in CACHE_VARIABLES:
        path = os.environ.get(name) or os.path.join(own, name.lower())
        os.makedirs(path, exist_ok=True)
        env[name] = path
    _prune(root, keep=own)
    return env


def _prune(root: str, keep: str) -> None:
    """Drop the least recently used candidates' caches beyond CACHES_KEPT."""
    try:
        os.utime(keep)
        entries = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    for entry in entries[CACHES_KEPT:]:
        shutil.rmtree(entry.path, ignore_errors=True)


def layout(own: str, readable: list[str], caches: dict[str, str]) -> dict:
    """What the runner binds back inside: ``own`` and the caches writable, ``readable`` read-only.
    Python's own paths are added to what must stay readable, when a tmpfs would hide them."""
    paths = [*readable, sys.prefix, sys.base_prefix, *site.getsitepackages(), *sys.path]
    paths += os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return {
        "writable": _dirs([own, *caches.values()]),
        "readable": [p for p in _dirs(paths) if _under(p, HIDDEN)],
    }


def _dirs(paths: list[str]) -> list[str]:
    seen: list[str] = []
    for path in paths:
        if path and os.path.isdir(path) and not os.path.islink(path):
            path = os.path.abspath(path)
            if path != "/" and path not in seen:
                seen.append(path)
    return seen


def _under(path: str, roots) -> bool:
    return any(path == r or path.startswith(r + os.sep) for r in roots)


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    libc.unshare.argtypes = [ctypes.c_int]
    return libc


def _mount(libc, source: str | None, target: str, flags: int, fstype: str | None = None, data: str | None = None):
    encoded = [x.encode() if x else None for x in (source, target, fstype, data)]
    if libc.mount(*encoded[:3], flags, encoded[3]) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), target)


def _kept_flags(path: str) -> int:
    """The flags a remount must repeat: in a user namespace they are locked to the original's."""
    f = os.statvfs(path).f_flag
    flags = f & (_MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_NOATIME | _MS_NODIRATIME)
    return flags | (_MS_RELATIME if f & 4096 else 0)


def _mount_points() -> list[str]:
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4]
            # mountinfo escapes space, tab, newline and backslash as octal
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), point)
            if point not in points:
                points.append(point)
    return sorted(points, key=len)


def restrict_files(writable: list[str], readable: list[str]) -> list[str]:
    """Everything read-only, the HIDDEN folders replaced by private tmpfs, then ``writable`` bound
    back writable and ``readable`` read-only. Returns the mounts that could not be made
    read-only; raises OSError when the rest fails."""
    libc = _libc()
    # Handles on the folders to bring back, taken before anything hides them.
    handles = [(os.open(p, os.O_PATH | os.O_DIRECTORY), p, True) for p in writable]
    handles += [(os.open(p, os.O_PATH | os.O_DIRECTORY), p, False) for p in readable]
    failed = []
    for point in _mount_points():
        if _under(point, _LEFT_AS_THEY_ARE) and not _under(point, HIDDEN):
            continue
        try:
            _mount(libc, None, point, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _kept_flags(point))
        except OSError as exc:
            failed.append(f"{point} ({exc.strerror})")
    for folder in HIDDEN:
        if os.path.isdir(folder) and not os.path.islink(folder):
            _mount(libc, "tmpfs", folder, _MS_NOSUID | _MS_NODEV, fstype="tmpfs", data="mode=1777")
    for fd, path, rw in handles:
        os.makedirs(path, exist_ok=True)
        _mount(libc, f"/proc/self/fd/{fd}", path, _MS_BIND)
        _mount(libc, None, path, _MS_REMOUNT | _MS_BIND | (0 if rw else _MS_RDONLY) | _kept_flags(path))
        os.close(fd)
    return failed


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


def settle(layout: dict, *fds: int) -> str:
    """Run first thing in a process that is PID 1 of its namespaces: restrict the file system as
    ``layout`` says, fork (this process stays behind as the reaper), lock the mounts in the child,
    which returns and goes on. ``fds`` are closed in the reaper. Returns what was achieved, as
    one line: "read-only ..." when everything holds."""
    files = _restrict(layout)
    _become_reaper(*fds)
    if files.startswith("read-only"):
        try:
            lock_mounts()
        except OSError as exc:  # without the lock the candidate could remount them writable
            files = f"not restricted: the mounts could not be locked ({exc.strerror})"
    return files


def _restrict(layout: dict) -> str:
    if not layout:
        return "not restricted: no layout given"
    try:
        failed = restrict_files(layout.get("writable", []), layout.get("readable", []))
    except OSError as exc:
        return f"not restricted: {exc.strerror} ({exc.filename})"
    if failed:
        return f"partly read-only: {len(failed)} mounts stayed writable, first {failed[0]}"
    return f"read-only except its folder, temp files and {len(layout.get('writable', [])) - 1} cache folders"


def _become_reaper(*fds: int) -> None:
    """As PID 1 of a PID namespace a process ignores signals it has no handler for, even its own
    SIGSEGV or SIGABRT. So PID 1 forks: the child goes on, and PID 1 only waits, reporting a death
    by signal N as exit status 128 + N (host.py reads it back)."""
    child = os.fork()
    if child == 0:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C meant for forge is not the candidate's death
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
