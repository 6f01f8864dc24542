"""Namespaces for the candidate's process: it cannot see or signal forge's processes, reach a network,
or write anything but its own folder, temp files and the compilers' caches.

The candidate's runner starts under ``unshare`` (util-linux) in six new
namespaces: user, PID, mount, network, IPC and UTS, the user mapped to root
there (which gives it nothing outside): inside, it runs under a reaper (PID 1), at a PID drawn at random,
``/proc`` shows only its own processes, there is no network but a down
loopback, no System V IPC or POSIX queue shared with anyone, and a process
outside (the host, the reference runner, the user's shell) has no PID it could
name.
Killing the namespace's first process kills everything in it, so nothing it
starts outlives its evaluation.

Files (``settle``, run by the reaper before any candidate code): every mount
is made read-only, so that nothing a later verdict trusts can change (the
Python installation with torch, forge's code and store, tasks, anything on the
path); fresh private tmpfs of bounded size cover /tmp, /var/tmp, /dev/shm,
/run and every top-level folder that is not the operating system's (/home,
/root, /work, /mnt...), which hides other evaluations' folders, the sockets
kept there and the user's keys and files, and its own working folder; the compilers' caches are bound back writable and what
it must read (the reference's saved inputs, its own source) read-only. The
serving process then moves into a nested user and mount namespace, where all of
it is locked: it cannot remount, unmount or move those mounts.

Where user namespaces are off (a sysctl, a container's seccomp profile) or
``unshare`` is missing, evaluations go on without them and say so.
"""

from __future__ import annotations

import ctypes
import os
import re
import secrets
import shutil
import signal
import site
import stat
import subprocess
import sys
import time

# --kill-child: if unshare itself dies, its child gets SIGKILL; --mount-proc implies a mount namespace.
_NAMESPACES = ["--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--ipc", "--uts"]
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

# Replaced by empty private tmpfs inside, each with its size limit: RAM, so bounded. The cgroup tree
# holds the other runners' groups: the reference's freezer folder, whose files the host writes inside
# every reference window (a review slowed those writes through file notifications on it), and whose
# events would tell a candidate when the reference is timed. The host reads the candidate's from outside.
HIDDEN = {"/tmp": "1g", "/var/tmp": "64m", "/dev/shm": "256m", "/run": "16m", "/sys/fs/cgroup": "1m"}
# The operating system's own top-level folders. Every other one is hidden too (hidden_folders): the
# home folders and wherever the user keeps data, work and keys (/home, /root, /work, /data, /mnt).
# What the candidate needs from there (a virtual environment, forge's sandbox code, its compilers'
# caches) is bound back like anything else it needs (layout).
SYSTEM_FOLDERS = frozenset("bin boot dev etc lib lib32 lib64 libx32 opt proc run sbin snap sys tmp usr var".split())
OTHER_FOLDER_SIZE = "16m"


def hidden_folders() -> dict[str, str]:
    """Every folder replaced by an empty private tmpfs inside, with its size limit."""
    hidden = dict(HIDDEN)
    try:
        entries = sorted(os.listdir("/"))
    except OSError:
        entries = ["home", "root"]
    for name in entries:
        path = "/" + name
        if name not in SYSTEM_FOLDERS and os.path.isdir(path) and not os.path.islink(path):
            hidden[path] = OTHER_FOLDER_SIZE
    return hidden


def secret_files(etc: str = "/etc", root: str = "/") -> list[str]:
    """Files covered by an empty one inside: every plain file at the top of the file system (no
    program needs one there) and every file in /etc that not everyone may read (password hashes,
    host keys, sudoers), which a runner started by root could read through its namespaces."""
    found = []
    try:
        found += [e.path for e in os.scandir(root) if e.is_file(follow_symlinks=False)]
    except OSError:
        pass
    for folder, _dirs, files in os.walk(etc):
        for name in files:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and not st.st_mode & stat.S_IROTH:
                found.append(path)
    return sorted(found)


OWN_FOLDER_SIZE = "256m"  # the candidate's working folder inside, a private tmpfs too
CACHE_VARIABLES = ("TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "CUPY_CACHE_DIR", "CUDA_CACHE_PATH", "XDG_CACHE_HOME")

CACHES_KEPT = 64  # candidate sources whose compiled builds stay cached
CACHE_KEPT_BYTES = 128 * 2**20  # the most one source's build products may keep after its evaluation
CACHES_TOTAL_BYTES = 2 * 2**30  # and all sources' together
WRITE_BUDGET_BYTES = 2**30  # what a candidate may write into the folders it shares with the host, while it runs

# What a compiler leaves in each cache that is worth keeping; everything else goes after an evaluation.
BUILD_PRODUCTS = {
    "TORCH_EXTENSIONS_DIR": (".so", ".o", ".cpp", ".cu", ".h", ".cuh", "build.ninja", ".ninja_deps", ".ninja_log"),
    "TRITON_CACHE_DIR": (".json", ".ttir", ".ttgir", ".llir", ".ptx", ".cubin", ".so", ".source", ".c", ".hsaco"),
    "CUPY_CACHE_DIR": (".cubin", ".ptx", ".fatbin", ".hsaco"),
    "CUDA_CACHE_PATH": (),  # the driver's JIT cache: rebuilt when missing, never trusted across evaluations
    "XDG_CACHE_HOME": (),
}


def cache_root() -> str:
    """Where forge keeps the candidates' compiler caches and the reference baselines:
    $FORGE_SANDBOX_CACHE, or ~/.cache/kernel-sandbox (a name a candidate cannot tell forge by)."""
    return os.environ.get("FORGE_SANDBOX_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "kernel-sandbox")


def cache_environment(key: str) -> dict[str, str]:
    """Where the candidate's compilers keep their caches: folders of forge's own, one set per
    candidate source (``key``), so that no candidate can plant a build that another one's
    source, a trusted runner or the user's own processes would load (the user's
    TRITON_CACHE_DIR and the like are never given to a candidate)."""
    root = os.path.join(cache_root(), "candidates")
    own = os.path.join(root, key)
    env = {"TMPDIR": "/tmp"}  # the private tmpfs inside
    for name in CACHE_VARIABLES:
        env[name] = os.path.join(own, name.lower())
        os.makedirs(env[name], exist_ok=True)
    _prune(root, keep=own)
    return env


def reference_cache_environment() -> dict[str, str]:
    """The trusted reference runner's own compiler caches (torch.compile of the reference), apart
    from every candidate's: no candidate's folder is one a trusted process loads code from."""
    own = os.path.join(cache_root(), "reference")
    env = {"TORCHINDUCTOR_CACHE_DIR": os.path.join(own, "inductor"), "TRITON_CACHE_DIR": os.path.join(own, "triton")}
    for path in env.values():
        os.makedirs(path, exist_ok=True)
    return env


def tidy_caches(caches: dict[str, str]) -> None:
    """After an evaluation: keep only the build products in a candidate's caches (BUILD_PRODUCTS),
    regular files only, and nothing at all when they pass CACHE_KEPT_BYTES."""
    kept = 0
    for name, folder in caches.items():
        suffixes = BUILD_PRODUCTS.get(name)
        if suffixes is None:
            continue
        for entry in _walk(folder):
            if entry.is_file(follow_symlinks=False) and entry.name.endswith(suffixes) and suffixes:
                kept += entry.stat(follow_symlinks=False).st_size
            else:
                _remove(entry)
    if kept > CACHE_KEPT_BYTES:
        for name, folder in caches.items():
            if name in BUILD_PRODUCTS:
                shutil.rmtree(folder, ignore_errors=True)


def _walk(folder: str):
    """Every entry under ``folder``, deepest first, without following links."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(entry.path)
        yield entry


def _remove(entry) -> None:
    try:
        if entry.is_dir(follow_symlinks=False):
            os.rmdir(entry.path)  # empty by now (deepest first), or kept because it still holds products
        else:
            os.unlink(entry.path)
    except OSError:
        pass


def bytes_under(folders: list[str]) -> int:
    """The bytes the regular files under these folders take, links not followed."""
    total = 0
    for folder in folders:
        for entry in _walk(folder):
            try:
                if entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
    return total


def bytes_held_unlinked(pids: list[int], folders: list[str]) -> int:
    """The bytes of files that ``pids`` hold open or mapped, unlinked, on the file systems of ``folders``: space
    written there that no walk of the folders finds (red team round 11: 16 GB fallocated into files
    beside a built extension, unlinked and kept open, against a budget of 1 GiB)."""
    devices = set()
    for folder in folders:
        try:
            devices.add(os.stat(folder).st_dev)
        except OSError:
            continue
    seen, total = set(), 0
    for pid in pids:
        # Its descriptors, and its mappings (a file mapped stays when its descriptor is closed); each
        # link names the open file itself, linked or not. The mappings' links need the host's privilege.
        links = []
        for kind in ("fd", "map_files"):
            try:
                links += [f"/proc/{pid}/{kind}/{name}" for name in os.listdir(f"/proc/{pid}/{kind}")]
            except OSError:
                continue
        for link in links:
            try:
                st = os.stat(link)
            except OSError:
                continue
            if (
                st.st_nlink == 0
                and stat.S_ISREG(st.st_mode)
                and st.st_dev in devices
                and (st.st_dev, st.st_ino) not in seen
            ):
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def _prune(root: str, keep: str) -> None:
    """Drop the least recently used sources' caches beyond CACHES_KEPT or CACHES_TOTAL_BYTES."""
    try:
        os.utime(keep)
        entries = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    hour_ago = time.time() - 3600
    total = 0
    for rank, entry in enumerate(entries):
        total += bytes_under([entry.path])
        over = rank >= CACHES_KEPT or total > CACHES_TOTAL_BYTES
        if over and entry.stat(follow_symlinks=False).st_mtime < hour_ago:  # never one in use
            shutil.rmtree(entry.path, ignore_errors=True)


def layout(own: str, readable: list[str], caches: dict[str, str], gpu: bool = True) -> dict:
    """What the runner sets up inside: ``own`` a private tmpfs (its working folder), the caches
    bound back writable, ``readable`` read-only, the GPU's device nodes only with ``gpu``. Python's own paths are added to what must stay
    readable, when a tmpfs would hide them. A readable folder that would bring back a whole hidden
    folder, or cover a writable one, is left out."""
    writable = _dirs([*(v for k, v in caches.items() if k in CACHE_VARIABLES)])
    # Python itself, its packages, and forge's sandbox code: not the host's whole sys.path (its
    # working folder, a test suite's folders), which may hold what a candidate must not read.
    sandbox_code = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    python = [sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(), site.getusersitepackages()]
    paths = [*readable, *python, sandbox_code, *(p for p in sys.path if p and _under(os.path.abspath(p), python))]
    paths += os.environ.get("PYTHONPATH", "").split(os.pathsep)
    # And where they lead, for a path through a symbolic link (a virtual environment linked from elsewhere):
    # a library opened through the link is mapped under its real path, which the host's samples name
    # (cpu_samples) and must find the same file at, inside; the runner may have opened it before these mounts.
    paths += [os.path.realpath(p) for p in paths if p]
    hidden = hidden_folders()
    keep = [
        p
        for p in _dirs(paths)
        if _under(p, hidden)
        and not any(_under(h, [p]) for h in hidden)  # /tmp itself (or / ) would undo the tmpfs
        and not any(_under(w, [p]) for w in [*writable, own])
    ]
    return {"own": os.path.abspath(own), "writable": writable, "readable": keep, "gpu": gpu,
            "files": True, "filter": True, "local_sockets": False}  # fmt: skip


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
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            point = line.split()[4]
            # mountinfo escapes space, tab, newline and backslash as octal; names need not be UTF-8
            point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), point)
            text = os.fsdecode(point)
            if text not in points:
                points.append(text)
    return sorted(points, key=len)


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]  # fmt: skip


_SYS_MOUNT_SETATTR = 442  # the same number on x86-64 and arm64 (Linux 5.12+)
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1


def _all_read_only(libc) -> list[str]:
    """Every mount read-only: in one recursive call where the kernel has mount_setattr, otherwise
    mount by mount (returning those that refused)."""
    attr = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    libc.syscall.restype = ctypes.c_long
    done = libc.syscall(
        ctypes.c_long(_SYS_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD), ctypes.c_char_p(b"/"),
        ctypes.c_uint(_AT_RECURSIVE), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
    )  # fmt: skip
    if done == 0:
        return []
    failed = []
    for point in _mount_points():
        try:
            _mount(libc, None, point, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _kept_flags(point))
        except OSError as exc:
            failed.append(f"{point} ({exc.strerror})")
    return failed


def restrict_files(own: str, writable: list[str], readable: list[str], gpu: bool = True) -> list[str]:
    """Every mount read-only (/proc, /sys and /dev too; on a GPU, the folders of processes started
    later in /proc stay writable: _proc_writable_for_cuda), the hidden folders replaced by private
    tmpfs, then ``readable`` bound back read-only and ``writable`` writable, in that order so that
    no read-only folder covers a writable one, and a private tmpfs over ``own``, its working
    folder; the GPU's device nodes only with ``gpu``. Returns the mounts not made as planned; raises
    OSError when the rest fails."""
    libc = _libc()
    # Handles on the folders to bring back, taken before anything hides them.
    handles = [(os.open(p, os.O_PATH | os.O_DIRECTORY), p, False) for p in readable]
    handles += [(os.open(p, os.O_PATH | os.O_DIRECTORY), p, True) for p in writable]
    failed = _all_read_only(libc)
    if gpu:
        failed += _proc_writable_for_cuda(libc)
    failed += _minimal_dev(libc, gpu)
    for folder, size in hidden_folders().items():
        if os.path.isdir(folder) and not os.path.islink(folder):
            _mount(libc, "tmpfs", folder, _MS_NOSUID | _MS_NODEV, fstype="tmpfs", data=f"mode=1777,size={size}")
    for path in secret_files():
        try:
            _mount(libc, "/dev/null", path, _MS_BIND)
        except OSError as exc:
            failed.append(f"{path} ({exc.strerror})")
    for fd, path, rw in handles:
        os.makedirs(path, exist_ok=True)
        _mount(libc, f"/proc/self/fd/{fd}", path, _MS_BIND)
        _mount(libc, None, path, _MS_REMOUNT | _MS_BIND | (0 if rw else _MS_RDONLY) | _kept_flags(path))
        os.close(fd)
    if own:
        os.makedirs(own, exist_ok=True)
        _mount(libc, "tmpfs", own, _MS_NOSUID | _MS_NODEV, fstype="tmpfs", data=f"mode=700,size={OWN_FOLDER_SIZE}")
    try:
        _seal_dev(libc)
    except OSError as exc:
        failed.append(f"/dev ({exc.strerror})")
    if own:
        os.chdir(own)  # its own folder, as now mounted (the old working folder is read-only)
    return failed


def _proc_writable_for_cuda(libc) -> list[str]:
    """CUDA's driver names each thread it starts by writing /proc/self/task/TID/comm, and does not
    start where it cannot (error 304, "OS call failed": forge's first GPU run, an H200 with driver
    580, where CUDA started in the bare namespaces and failed once /proc was read-only). So on a GPU
    /proc is writable again, for the processes started from here on only: every entry there now is
    first bound read-only over itself, the kernel's settings (/proc/sys, /proc/sysrq-trigger, which a
    runner started by root could write as root) and the folders of this process and its threads (it
    becomes the reaper: its memory, written through /proc/1/mem, would run outside the system call
    filter). An entry that appears at the top of /proc later (a module loaded later) is not covered.
    Where any of that fails, /proc stays read-only."""
    # /proc lists a process's main thread only: this one's other threads (torch's, started at its
    # import) stay in the reaper too, each with a folder of its own under /proc/TID.
    names = sorted(set(os.listdir("/proc")) | set(os.listdir("/proc/self/task")))
    try:
        for name in names:
            path = f"/proc/{name}"
            if name in ("self", "thread-self") or os.path.islink(path):
                continue  # links to a process's own folder, resolved when used
            _mount(libc, path, path, _MS_BIND)
            _mount(libc, None, path, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _kept_flags(path))
        _mount(libc, None, "/proc", _MS_REMOUNT | _MS_BIND | _kept_flags("/proc"))
    except OSError as exc:
        return [f"/proc (left read-only, where CUDA may not start: {exc.filename} {exc.strerror})"]
    return []


# Device nodes a kernel candidate may need: the usual pseudo-devices, and the GPU's where it runs on one.
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_GPU_DEVICES = ("nvidia*", "nvidia-caps", "dri")


def device_nodes(gpu: bool, dev: str = "/dev") -> list[str]:
    """The names under ``dev`` that a candidate's /dev holds: the pseudo-devices, and the GPU's nodes
    only when it is evaluated on the GPU (a CPU task's kernel that computes on a GPU is not a CPU
    kernel, and the CPU's sampling would not see its work)."""
    import glob

    names = [n for n in _DEVICES if os.path.exists(f"{dev}/{n}")]
    if gpu:
        names += sorted({os.path.basename(p) for pattern in _GPU_DEVICES for p in glob.glob(f"{dev}/{pattern}")})
    return names


def _minimal_dev(libc, gpu: bool) -> list[str]:
    """A fresh /dev with only the device_nodes, bound from the real /dev. Read-only mounts do not
    stop writes to device nodes, and where forge runs as root the candidate owns them all
    (consoles, loop devices, kvm...). On failure the real /dev stays, read-only."""
    names = device_nodes(gpu)
    handles = []
    try:
        for name in names:
            handles.append((os.open(f"/dev/{name}", os.O_PATH), name, os.path.isdir(f"/dev/{name}")))
        _mount(libc, "tmpfs", "/dev", _MS_NOSUID | _MS_NOEXEC, fstype="tmpfs", data="mode=755,size=1m")
        for fd, name, is_dir in handles:
            target = f"/dev/{name}"
            if is_dir:
                os.mkdir(target)
            else:
                os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
            _mount(libc, f"/proc/self/fd/{fd}", target, _MS_BIND)
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):  # fmt: skip
            os.symlink(target, f"/dev/{name}")
        os.mkdir("/dev/shm")  # a tmpfs of its own comes next (HIDDEN)
        return []
    except OSError as exc:
        return [f"/dev (only its own devices: {exc.strerror})"]
    finally:
        for fd, _, _ in handles:
            os.close(fd)


def _seal_dev(libc) -> None:
    """The fresh /dev read-only, once its mounts are in place."""
    if os.path.ismount("/dev") and os.path.isdir("/dev/shm"):
        _mount(libc, None, "/dev", _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _kept_flags("/dev"))


def lock_mounts() -> None:
    """Move into a nested user and mount namespace: the mounts made above become locked there (it
    cannot remount them writable, unmount or move them). No uid map is written, so that /proc can
    stay read-only: the process keeps its kernel uid for file access and shows as the overflow uid."""
    libc = _libc()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), "unshare")


# -- inside the namespaces ------------------------------------------------------------------


def settle(layout: dict, *fds: int) -> str:
    """Run first thing in a process that is PID 1 of its namespaces: restrict the file system as
    ``layout`` says, fork (this process stays behind as the reaper), lock the mounts in the child,
    which returns and goes on. ``fds`` are closed in the reaper. Returns what was achieved, as
    one line: "read-only ..." when everything holds."""
    _draw_next_pid()
    files = _restrict(layout)
    _become_reaper(*fds)
    try:
        lock_mounts()  # always: even a partial restriction must not be undone from inside
    except OSError as exc:
        files = f"not restricted: the mounts could not be locked ({exc.strerror})"
    if not layout.get("filter", True):
        return files + "; no system call filter (lifted: CUDA did not start under it)"
    try:
        filter_system_calls(local_sockets=bool(layout.get("local_sockets")))
    except (OSError, KeyError) as exc:  # KeyError: a machine type without a filter here
        files += f"; no system call filter: socket files stay reachable, namespaces can be made ({exc})"
    return files


def _draw_next_pid() -> None:
    """The PID the runner gets (the reaper's child) drawn at random, not 2: a kernel that checked for
    forge's runner by its PID could be right in forge and wrong in a user's model (a fresh review,
    2026-11-26). PID 1 of the namespace may set where the namespace's PIDs go on from, while /proc/sys is
    writable (before _restrict)."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(300 + secrets.randbelow(20000)))
    except OSError:
        pass  # a kernel without it: PID 2, as before


def _restrict(layout: dict) -> str:
    if not layout:
        return "not restricted: no layout given"
    if not layout.get("files", True):
        return "not restricted: left out (CUDA did not start with the files restricted)"
    try:
        failed = restrict_files(layout.get("own", ""), layout.get("writable", []), layout.get("readable", []),
                                gpu=layout.get("gpu", True))  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - any failure here is a note, and the runner goes on
        return f"not restricted: {getattr(exc, 'strerror', None) or exc} ({getattr(exc, 'filename', '')})"
    if failed:
        return f"partly read-only: {len(failed)} mounts not made as planned, first {failed[0]}"
    return f"read-only except its folder, temp files and {len(layout.get('writable', []))} cache folders"


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
    while True:  # orphans of the namespace come to PID 1 too: reap them all, until the child ends
        try:
            pid, status = os.wait()
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            break
    os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))


# -- the system call filter -----------------------------------------------------------------

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOENT, _ENOSYS = 1, 2, 38
# Per machine: the audit arch, then the numbers of socket(2), socketpair(2), connect(2), clone(2),
# clone3(2) and fcntl(2).
_NATIVE = {"x86_64": (0xC000003E, 41, 53, 42, 56, 435, 72), "aarch64": (0xC00000B7, 198, 199, 203, 220, 435, 25)}
# Refused outright: io_uring (its IORING_OP_SOCKET makes sockets the socket(2) rule never sees),
# userfaultfd and bpf (kernel attack surface no kernel candidate needs), unshare and setns (a
# namespace of its own would hide a process from the host, which finds the candidate's processes
# by their PID namespace: see host.runner_processes), ptrace and process_vm_writev (they write into
# another process's code where no mapping is made: code the host names by the bytes it reads after a
# timed block must not change unseen, see cpu_samples.UNVERIFIED; /proc/PID/mem, the other way, is on a
# read-only /proc here, except on a GPU, where no samples are taken and /proc stays writable for the
# candidate's own processes: _proc_writable_for_cuda), and the kernel's asynchronous I/O (io_setup,
# io_destroy, io_getevents, io_submit, io_cancel, io_pgetevents: its transfers go on while the
# candidate stands frozen, and would while the reference is timed), and file notifications (inotify,
# fanotify; dnotify, fcntl's F_NOTIFY, below): a review of 2026-11-29 set 19,000 dnotify marks on the
# reference's freezer folder, which it could see, so that each of the host's reads and writes there,
# inside the window around every reference call, walked them all (10 ms a call): the overhead the host
# takes off the candidate's windows grew that much.
_REFUSED = {"x86_64": (425, 426, 427, 323, 321, 272, 308, 101, 311, 206, 207, 208, 209, 210, 333,
                       253, 254, 294, 300, 301),
            "aarch64": (425, 426, 427, 282, 280, 97, 268, 117, 271, 0, 1, 2, 3, 4, 292,
                        26, 27, 262, 263)}  # fmt: skip
_F_NOTIFY = 1026
# Sockets refused: vsock, AF_ALG (the kernel's crypto runs in kernel threads of no cgroup of the
# candidate's, beside the reference) and local datagram sockets, which can send to any socket file by
# its path (sendto, sendmsg: the address is in memory, where a filter cannot read it). Local stream and
# seqpacket sockets are let through, since the GPU driver's start makes a local socket (an H100 and an
# H200, 2026-11-26: CUDA failed with error 304 where socket(AF_UNIX) was refused, and started where it
# was allowed; which type it makes, bench/cuda_in_namespaces.py records). Such a socket reaches another
# only through connect(2), refused as ENOENT: "no socket there", what a driver meets on a machine
# without the daemons it looks for (CUDA started with /run, where they keep their sockets, hidden).
_AF_UNIX, _AF_VSOCK, _AF_ALG = 1, 40, 38
_SOCK_STREAM, _SOCK_SEQPACKET, _SOCK_TYPE_MASK = 1, 5, 0xF
# clone(2) flags refused: those that make a new namespace (CLONE_NEWTIME, NEWNS, NEWCGROUP, NEWUTS,
# NEWIPC, NEWUSER, NEWPID and NEWNET), and CLONE_PARENT, whose child is its parent's sibling: born
# under a process the host may already have read for children while it stops the runner's tree after
# a timed call (host.RunnerProcess.halt, where no freezer group holds the runner).
_CLONE_NAMESPACES = 0x80 | 0x20000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_CLONE_PARENT = 0x8000


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _assemble(program: list[tuple]) -> list[tuple[int, int, int, int]]:
    """Classic BPF from (code, k) and (code, k, jump if true, jump if false) rows, whose jumps name
    labels (a str row marks one) or None for the next instruction."""
    labels, rows = {}, []
    for row in program:
        if isinstance(row, str):
            labels[row] = len(rows)
        else:
            rows.append(row)
    out = []
    for i, row in enumerate(rows):
        code, k, *jumps = row
        jt, jf = (labels[j] - i - 1 if j is not None else 0 for j in (jumps or [None, None]))
        out.append((code, jt, jf, k))
    return out


def filter_system_calls(local_sockets: bool = False) -> None:
    """A seccomp filter, inherited by everything the process starts and never lifted:

    * connect(2) fails with ENOENT, and socket(AF_VSOCK), socket(AF_ALG) and local datagram sockets
      (socket or socketpair, SOCK_RAW too, which the kernel makes a datagram socket) with EPERM: the
      network namespace already cuts IP; this keeps a candidate from reaching a socket file it can
      still see (a daemon's under /var or /opt, say) and from the kernel's crypto threads, while the
      local stream socket a GPU driver makes at its start is let through (it can reach nothing: no
      connect, and a stream socket's sends take no address). With ``local_sockets`` every local socket
      and connect are let through: only where an operator allows less isolation for a GPU whose driver
      did not start under the whole filter (evaluate._check_isolation); socket files the candidate can
      still see are then in its reach;
    * new namespaces fail with EPERM (unshare, setns, clone with a CLONE_NEW* flag), and so does
      clone with CLONE_PARENT; clone3, whose flags a filter cannot read, fails with ENOSYS, so that
      the C library falls back to clone;
    * io_uring, the kernel's asynchronous I/O, userfaultfd, bpf, ptrace, process_vm_writev, file
      notifications (inotify, fanotify, fcntl F_NOTIFY) and any system call of another ABI (x32, i386)
      fail with EPERM.
    """
    import platform

    machine = platform.machine()
    arch, nr_socket, nr_socketpair, nr_connect, nr_clone, nr_clone3, nr_fcntl = _NATIVE[machine]
    # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, JMP|JSET|K, ALU|AND|K, RET|K
    ld, jeq, jge, jset, and_, ret = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
    program = _assemble([
        (ld, 4),  # seccomp_data.arch
        (jeq, arch, None, "refuse"),  # another ABI
        (ld, 0),  # seccomp_data.nr
        (jge, 0x40000000, "refuse", None),  # x32 system calls
        *[(jeq, nr, "refuse", None) for nr in _REFUSED[machine]],
        (jeq, nr_clone3, "no such call", None),
        (jeq, nr_clone, "clone", None),
        (jeq, nr_fcntl, "fcntl", None),
        (jeq, nr_connect, "allow" if local_sockets else "no socket there", None),
        (jeq, nr_socketpair, "family", None),
        (jeq, nr_socket, "family", "allow"),
        "clone",
        (ld, 16),  # args[0]: the flags
        (jset, _CLONE_NAMESPACES | _CLONE_PARENT, "refuse", "allow"),
        "fcntl",
        (ld, 24),  # args[1]: the command
        (jeq, _F_NOTIFY, "refuse", "allow"),
        "family",
        (ld, 16),  # args[0]: the address family
        (jeq, _AF_UNIX, "allow" if local_sockets else "local type", None),
        (jeq, _AF_VSOCK, "refuse", None),
        (jeq, _AF_ALG, "refuse", "allow"),
        "local type",
        (ld, 24),  # args[1]: the type, with SOCK_NONBLOCK and SOCK_CLOEXEC above its low bits
        (and_, _SOCK_TYPE_MASK),
        (jeq, _SOCK_STREAM, "allow", None),
        (jeq, _SOCK_SEQPACKET, "allow", "refuse"),
        "allow",
        (ret, _SECCOMP_RET_ALLOW),
        "no such call",
        (ret, _SECCOMP_RET_ERRNO | _ENOSYS),
        "no socket there",
        (ret, _SECCOMP_RET_ERRNO | _ENOENT),
        "refuse",
        (ret, _SECCOMP_RET_ERRNO | _EPERM),
    ])  # fmt: skip
    filters = (_SockFilter * len(program))(*[_SockFilter(*f) for f in program])
    fprog = _SockFprog(len(program), filters)
    libc = _libc()
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    for option, arg in ((_PR_SET_NO_NEW_PRIVS, 1), (_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER)):
        extra = ctypes.addressof(fprog) if option == _PR_SET_SECCOMP else 0
        if libc.prctl(option, arg, extra, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), "prctl")
