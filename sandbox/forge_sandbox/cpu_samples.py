"""Where a runner's CPU time goes, seen from outside it: the host samples its threads.

The operator census (op_census) runs inside the candidate's process, so native
code there can switch it off or hide from it (exclude the Python dispatch key,
``_DisableTorchDispatch``, work only while no census is on the stack). What no
code in that process can do is stop the kernel from sampling it. The host opens
a perf event on every thread of a runner (task clock, user space only, one
sample per ``period_ns`` of CPU time, inherited by every thread and process
started later, one ring buffer per CPU) and reads, per sample, the time, the
thread and the instruction pointer. :class:`FunctionNames` turns an instruction
pointer into the shared object and the function it lies in (the object's ELF
symbol table, through the process's memory map), so that the host can tell
PyTorch's own compute (softmax, attention, GEMM kernels inside libtorch) from
the candidate's code; op_census.judge_samples holds the rule.

This needs ``perf_event_open`` for the host's own processes (perf_event_paranoid
<= 2, as on a stock kernel, and no seccomp rule against it). Where the host may
not, :func:`available` says why and the verdict says the outside view is
missing; nothing is guessed.
"""

from __future__ import annotations

import bisect
import ctypes
import dataclasses
import errno
import fcntl
import functools
import glob
import importlib.util
import itertools
import mmap
import os
import site
import struct
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from forge_sandbox import host

# Each sample costs the sampled thread about 10 us of CPU time (measured on a 2-core VM: +39% CPU time
# at one sample per 50 us, +20% per 100 us, +12% per 200 us). Both runners pay it alike, so speedups
# keep, but a CPU figure is that much slower than unsampled; on CUDA nothing is sampled.
MIN_PERIOD_NS = 100_000  # at most one sample per 100 us of a thread's CPU time
SAMPLES_PER_CALL = 200  # the period is chosen for about this many per call (period_for)
# Per CPU and runner: 32768 samples, 3.3 s of a CPU's time at the shortest period (1 MiB locked each); drained
# after every call. With 64 pages an honest Triton attention kernel lost 1081 samples, and was rejected, while
# another evaluation loaded the machine (2026-11-29): the drainer below waited for a core that long.
RING_PAGES = 256
# and, while a block runs, by a host thread whenever a ring is a quarter full (Profiles.begin): a call long
# beside the period (an interpreted Triton kernel 40 times the reference's, whose period PROBE_TRUST caps)
# filled a ring within the call, and its lost samples rejected an honest kernel (2026-11-28).
# Seldom: each time the drainer wakes it takes Python's lock from the host's thread, which may be waiting
# for a call to end (checked every 20 ms, an honest C++ softmax's benchmark stage took 14 s, not 8.5 s;
# every 100 ms, 7 s). A ring a quarter full holds some 8000 samples: 0.8 s of a CPU's time at the shortest
# period, so a check every 100 ms drains it long before it is full.
DRAIN_CHECK_S = 0.1
DRAIN_AT_FILL = 0.25
# Mappings kept per runner (some 150 bytes each): PyTorch maps and unmaps each large tensor it allocates, a
# few per call; a runner that maps more while timed is not followed further (Sampler.mapped_beyond).
MAX_MAPPINGS_KEPT = 1 << 18
# Mappings made over code (executable, or over memory that is) per runner while timed: beyond these, code
# that comes and goes cannot be followed (an honest runner makes next to none: oneDNN's kernels are made
# while warming up), and its samples are not named at all (the verdict rejects it).
MAX_CODE_MAPPINGS = 4096

_SYSCALL_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(os.uname().machine)
_PERF_TYPE_SOFTWARE, _PERF_COUNT_SW_TASK_CLOCK = 1, 1
_SAMPLE_IP, _SAMPLE_TID, _SAMPLE_TIME = 1, 2, 4
_INHERIT, _EXCLUDE_KERNEL, _EXCLUDE_HV, _USE_CLOCKID = 1 << 1, 1 << 5, 1 << 6, 1 << 25
# Mappings as they are made, executable or not, mprotect's included (PERF_RECORD_MMAP2, with the sample's
# pid, tid and time after it): a page made writable, or data mapped over code, is seen as well as code mapped
_MMAP, _MMAP_DATA, _SAMPLE_ID_ALL, _MMAP2 = 1 << 8, 1 << 17, 1 << 18, 1 << 23
_PROT_WRITE, _PROT_EXEC, _MAP_SHARED = 2, 4, 1
_CLOCK_MONOTONIC = 1  # time.monotonic_ns() and time.perf_counter_ns() on Linux
_FLAG_FD_CLOEXEC = 8
_IOC_SET_OUTPUT = 0x2405
_RECORD_SAMPLE, _RECORD_LOST, _RECORD_MMAP2 = 9, 2, 10
_PAGE = mmap.PAGESIZE

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Sample:
    time_ns: int  # CLOCK_MONOTONIC
    pid: int  # as the host sees it
    tid: int
    ip: int


@dataclass(frozen=True)
class MappingMade:
    """Memory a sampled process mapped, or whose protection it changed, while the host watched."""

    time_ns: int  # CLOCK_MONOTONIC
    pid: int
    start: int
    end: int
    offset: int  # in the file
    file: tuple[int, int]  # (device, inode), as a memory map names it; (0, 0) for anonymous memory
    path: str  # as the process sees it ("//anon" for anonymous memory)
    prot: int = _PROT_EXEC
    shared: bool = False  # MAP_SHARED: what another mapping of the file writes shows through

    @property
    def executable(self) -> bool:
        return bool(self.prot & _PROT_EXEC)

    @property
    def writable(self) -> bool:
        return bool(self.prot & _PROT_WRITE)


def period_for(call_ms: float) -> int:
    """The sampling period (ns of CPU time) for calls of about ``call_ms``: ~SAMPLES_PER_CALL each, so
    that a ring buffer holds many calls' samples however long a call takes."""
    return max(MIN_PERIOD_NS, int(call_ms * 1e6 / SAMPLES_PER_CALL))


def _attributes(period_ns: int) -> ctypes.Array:
    attr = bytearray(112)
    flags = _INHERIT | _EXCLUDE_KERNEL | _EXCLUDE_HV | _USE_CLOCKID | _MMAP | _MMAP_DATA | _MMAP2 | _SAMPLE_ID_ALL
    struct.pack_into("IIQQQQQ", attr, 0, _PERF_TYPE_SOFTWARE, 112, _PERF_COUNT_SW_TASK_CLOCK, period_ns,
                     _SAMPLE_IP | _SAMPLE_TID | _SAMPLE_TIME, 0, flags)  # fmt: skip
    struct.pack_into("i", attr, 92, _CLOCK_MONOTONIC)
    return (ctypes.c_char * len(attr)).from_buffer(attr)


def _open_event(tid: int, cpu: int, period_ns: int = MIN_PERIOD_NS) -> int:
    if _SYSCALL_PERF_EVENT_OPEN is None:
        raise OSError(0, f"no perf_event_open number known for {os.uname().machine}")
    fd = _libc.syscall(_SYSCALL_PERF_EVENT_OPEN, _attributes(period_ns), tid, cpu, -1, _FLAG_FD_CLOEXEC)
    if fd < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return fd


def _online_cpus() -> list[int]:
    try:
        with open("/sys/devices/system/cpu/online") as f:
            text = f.read().strip()
    except OSError:
        return list(range(os.cpu_count() or 1))
    cpus = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


_AVAILABLE: str | None = None


def available() -> str:
    """'' when the host may sample its own child processes, otherwise why not (checked once)."""
    global _AVAILABLE
    if _AVAILABLE is None:
        try:
            os.close(_open_event(0, -1))
            _AVAILABLE = ""
        except OSError as exc:
            _AVAILABLE = f"perf_event_open refused ({exc.strerror or exc})"
    return _AVAILABLE


class _Ring:
    """One CPU's ring buffer, which every event of a runner on that CPU writes to."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.map = mmap.mmap(fd, _PAGE * (1 + RING_PAGES), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        offset, size = struct.unpack_from("QQ", self.map, 1040)
        self.offset, self.size = (offset, size) if size else (_PAGE, _PAGE * RING_PAGES)

    def fill(self) -> float:
        """How much of the ring holds records not drained yet (0 to 1)."""
        head, tail = struct.unpack_from("QQ", self.map, 1024)
        return (head - tail) / self.size

    def _read(self, position: int, n: int) -> bytes:
        start = position % self.size
        first = min(n, self.size - start)
        data = self.map[self.offset + start : self.offset + start + first]
        return data + self.map[self.offset : self.offset + n - first] if first < n else data

    def drain(self, into: list[Sample], mapped: list[MappingMade]) -> int:
        """Append every sample, and every mapping made, written since the last drain; return how many
        records were lost."""
        head, tail = struct.unpack_from("QQ", self.map, 1024)
        lost = 0
        while tail < head:
            kind, _misc, size = struct.unpack("IHH", self._read(tail, 8))
            if size < 8:
                break  # a corrupt record: nothing after it can be trusted to line up
            if kind == _RECORD_SAMPLE and size >= 32:
                ip, pid, tid, when = struct.unpack("QIIQ", self._read(tail + 8, 24))
                into.append(Sample(when, pid, tid, ip))
            elif kind == _RECORD_MMAP2 and size >= 88:
                record = self._read(tail, size)
                pid, _tid, addr, length, offset, major, minor, inode = struct.unpack_from("IIQQQIIQ", record, 8)
                prot, flags = struct.unpack_from("II", record, 64)
                name = record[72 : size - 16].split(b"\0", 1)[0].decode("utf-8", "replace")
                when = struct.unpack_from("Q", record, size - 8)[0]  # sample_id_all: pid, tid, then the time
                mapped.append(MappingMade(when, pid, addr, addr + length, offset, (os.makedev(major, minor), inode),
                                          name, prot, bool(flags & _MAP_SHARED)))  # fmt: skip
            elif kind == _RECORD_LOST and size >= 24:
                lost += struct.unpack("QQ", self._read(tail + 8, 16))[1]
            tail += size
        struct.pack_into("Q", self.map, 1032, tail)
        return lost

    def close(self) -> None:
        self.map.close()


class Sampler:
    """The perf events on one runner's threads; :meth:`attach` again to take in threads started since."""

    def __init__(self, period_ns: int = MIN_PERIOD_NS) -> None:
        self.period_ns = period_ns
        self.cpus = _online_cpus()
        self.rings: dict[int, _Ring] = {}
        self.fds: list[int] = []
        self.attached: set[int] = set()
        self.refused: set[int] = set()  # threads the kernel would not let the host sample
        self.lost = 0
        self.mapped: list[MappingMade] = []  # every mapping made since attaching, in time order
        self.mapped_beyond = 0  # mappings made beyond MAX_MAPPINGS_KEPT, not kept: what ran there is unknown

    def attach(self, pids: list[int]) -> None:
        """Sample every thread of ``pids`` not sampled yet (children they start later are inherited)."""
        for pid in pids:
            try:
                tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
            except OSError:
                continue
            for tid in tids:
                if tid in self.attached:
                    continue
                for cpu in self.cpus:
                    try:
                        fd = _open_event(tid, cpu, self.period_ns)
                    except OSError as exc:
                        if exc.errno in (errno.EACCES, errno.EPERM):
                            # A process may make itself unreadable to its owner (PR_SET_DUMPABLE 0):
                            # it is then out of the host's sight, which no honest kernel needs.
                            self.refused.add(tid)
                        break  # else the thread is gone
                    self.fds.append(fd)
                    ring = self.rings.get(cpu)
                    if ring is None:  # OSError when the kernel refuses the pages (perf_event_mlock_kb)
                        self.rings[cpu] = _Ring(fd)
                    else:
                        fcntl.ioctl(fd, _IOC_SET_OUTPUT, ring.fd)
                self.attached.add(tid)

    def filling(self) -> bool:
        """Whether a ring is DRAIN_AT_FILL full or more."""
        return any(ring.fill() >= DRAIN_AT_FILL for ring in self.rings.values())

    def drain(self) -> list[Sample]:
        """Every sample since the last drain, in time order."""
        samples: list[Sample] = []
        mapped: list[MappingMade] = []
        for ring in self.rings.values():
            self.lost += ring.drain(samples, mapped)
        samples.sort(key=lambda s: s.time_ns)
        room = max(0, MAX_MAPPINGS_KEPT - len(self.mapped))
        self.mapped += sorted(mapped, key=lambda m: m.time_ns)[:room]
        self.mapped_beyond += max(0, len(mapped) - room)
        return samples

    def close(self) -> None:
        for ring in self.rings.values():
            ring.close()
        for fd in self.fds:
            os.close(fd)
        self.rings.clear()
        self.fds.clear()


# -- instruction pointers to functions ----------------------------------------------------------------


class _ElfFunctions:
    """The function symbols of one ELF file, by address, and its loadable segments."""

    def __init__(self, path: str, max_symbol_bytes: int = 0) -> None:
        self.starts = np.zeros(0, dtype=np.uint64)
        self.ends = np.zeros(0, dtype=np.uint64)
        self.name_offsets = np.zeros(0, dtype=np.uint32)
        self.segments: list[tuple[int, int, int]] = []  # (file offset, file size, virtual address)
        self.path = path
        self.strtab: tuple[int, int] = (0, 0)
        self.max_symbol_bytes = max_symbol_bytes or MAX_SYMBOL_BYTES
        self.symbol_bytes = 0  # read from the file
        try:
            with _open_mapped_file(path) as f:
                self._parse(f)
        except Exception:  # noqa: BLE001 - the file is the candidate's to shape: no reading of it may end a run
            # not an ELF file we can read (or one made to mislead a parser): its samples keep the file's name only
            self.starts = self.ends = np.zeros(0, dtype=np.uint64)
            self.segments = []

    def _parse(self, f) -> None:
        header = f.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2:
            raise ValueError("not a 64-bit ELF file")
        phoff, shoff = struct.unpack_from("<QQ", header, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", header, 0x36)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
        for i in range(phnum):
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
            if p_type == 1:
                self.segments.append((p_offset, p_filesz, p_vaddr))
        f.seek(shoff)
        sections = f.read(shentsize * shnum)
        headers = [struct.unpack_from("<IIQQQQIIQQ", sections, i * shentsize) for i in range(shnum)]
        chosen = next((h for h in headers if h[1] == 2), None) or next((h for h in headers if h[1] == 11), None)
        if chosen is None:
            return
        strtab = headers[chosen[6]]
        self.strtab = (strtab[4], strtab[5])
        if chosen[5] > self.max_symbol_bytes:
            raise ValueError("a symbol table larger than allowed")
        self.symbol_bytes = chosen[5]
        kept = []  # a chunk at a time: what the file claims is not held in memory at once
        f.seek(chosen[4])
        left = chosen[5] // 24
        while left > 0:
            symbols = np.fromfile(f, dtype=_SYMBOL, count=min(_SYMBOLS_PER_READ, left))
            if not len(symbols):
                break
            left -= len(symbols)
            kept.append(symbols[((symbols["info"] & 0xF) == 2) & (symbols["value"] != 0)])
        functions = np.concatenate(kept) if kept else np.zeros(0, dtype=_SYMBOL)
        order = np.argsort(functions["value"], kind="stable")
        functions = functions[order]
        self.starts = functions["value"]
        # A function of no declared size (hand-written or generated assembly: NNPACK's kernels in
        # libtorch_cpu) runs to where the next one starts: by its first byte alone, its samples would
        # have no name at all.
        following = np.append(self.starts[1:], self.starts[-1:] + 1) if len(self.starts) else self.starts
        self.ends = np.where(
            functions["size"] > 0, functions["value"] + functions["size"], np.maximum(following, self.starts + 1)
        )
        self.name_offsets = functions["name"]

    def virtual_address(self, file_offset: int) -> int | None:
        for offset, size, vaddr in self.segments:
            if offset <= file_offset < offset + size:
                return file_offset - offset + vaddr
        return None

    def function_at(self, vaddr: int) -> str:
        i = int(np.searchsorted(self.starts, np.uint64(vaddr), side="right")) - 1
        if i < 0 or vaddr >= int(self.ends[i]):
            return ""
        return self._name(int(self.name_offsets[i]))

    def _name(self, offset: int) -> str:
        start, size = self.strtab
        with _open_mapped_file(self.path) as f:
            f.seek(start + offset)
            raw = f.read(min(4096, max(0, size - offset)))
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


MAX_SYMBOL_BYTES = 512 * 2**20  # libtorch_cpu's is ~30 MB
# A file of the candidate's may claim any symbol table (a sparse file costs it nothing): the host reads at
# most this much of one, and of all of them together per runner (FunctionNames), beyond which samples keep
# the file's name only. Its own extension's is a few kB.
MAX_CANDIDATE_SYMBOL_BYTES = 64 * 2**20
SYMBOL_BYTES_PER_RUNNER = 256 * 2**20
_SYMBOL = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"),
                    ("size", "<u8")])  # fmt: skip
_SYMBOLS_PER_READ = 1 << 20


def _open_mapped_file(path: str):
    """A file the candidate's process maps, opened for reading as only a plain file: the candidate
    may have put a FIFO or a device in its place (opening a FIFO would block the host for good)."""
    try:
        return os.fdopen(host.open_regular_file(path), "rb")
    except host.UnsafeFile as exc:
        raise OSError(str(exc)) from None


_ELF_CACHE: dict[tuple, _ElfFunctions] = {}
_ELF_CACHE_ENTRIES = 1024  # the oldest goes first: every evaluation's candidate files come and go


def _elf(path: str, max_symbol_bytes: int = 0) -> _ElfFunctions | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_ino, st.st_size, st.st_mtime_ns, max_symbol_bytes)
    if key not in _ELF_CACHE:
        if len(_ELF_CACHE) >= _ELF_CACHE_ENTRIES:
            del _ELF_CACHE[next(iter(_ELF_CACHE))]
        _ELF_CACHE[key] = _ElfFunctions(path, max_symbol_bytes)
    return _ELF_CACHE[key]


# -- libraries under another name ------------------------------------------------------------------
#
# The rules name PyTorch's and numpy's libraries by file name (op_census.sample_kind, NUMERIC_LIBRARIES),
# and a process can make its memory map name any file for any code: a copy of OpenBLAS renamed
# libmine.so and called through ctypes, or libtorch_cpu's own code pages mapped again (MAP_FIXED) from
# a copy of the file with a byte appended, so that /proc/PID/maps names the copy for all of PyTorch's
# compute. So a sample in a file-backed mapping whose file name is not a known library's is named by
# the bytes that run there: a window around the instruction pointer, read from the process's memory
# (what runs, whatever the file holds now or whether it was deleted; from the mapped file where the
# host may not read the memory), is compared with the installed libraries'
# code (KnownLibraries) wherever a copy of it could have put those bytes. A copy keeps its code at
# the original's offset within a page (mmap maps whole pages and the code runs where it was linked),
# so the places tried are the page-granular ones: the same file offset (a copy with the same layout:
# renamed, stripped, an edited build-id or any byte appended, padding changed), the same offset from
# the start of an executable segment (a file holding that segment alone, mapped from offset 0 or
# from where the segment lies in it), and the original's own address where the original is loaded
# in the process (a few pages remapped from a file of any layout). A match names the original and
# its function there, from the original's symbols.
#
# What stays out of reach: code that does not sit at one of those places, whatever its bytes (a
# library's sources built into one's own extension, or its code relinked or moved to other offsets
# within a page), and code changed in more than a fifth of the bytes around each sampled instruction
# (only bytes that never run could be changed, so such a copy is a rewrite). Not named either: a
# copy's linker stubs (a call's jump through the PLT, a sliver of samples), and code mapped again
# between a block and the host's reading of the maps and memory just after it. Anonymous executable
# memory is classed as library code already (ANONYMOUS_CODE).

# Every installed package's shared objects are indexed (any of them can compute), but for copies of the
# C/C++ runtimes and compression libraries that packages bundle (pillow.libs' liblzma, torch's libgomp):
# the interpreter loads its own copies of those, which would match them.
_RUNTIME = ("libgcc", "libstdc++", "libgomp", "libz.", "libz-", "liblzma", "libffi", "libssl", "libcrypto",
            "libbz2", "libquadmath", "libgfortran", "libexpat", "libc.", "libm.", "libpthread", "libdl.")  # fmt: skip
# Packages whose compiled code a candidate's forward may run: PyTorch (op_census.sample_kind names its
# work), the kernel backends and the CUDA stack they load. Any other installed package's code that
# runs is another's compute (installed_package).
_OWN_STACK = ("torch", "functorch", "torchgen", "triton", "fastrlock")
_OWN_FAMILIES = ("nvidia", "cuda", "cupy")  # nvidia/cublas, cuda_bindings, cupy_backends...
_PACKAGE_ROOTS = ("site-packages", "dist-packages")
# The operating system's libraries a candidate can read, and the names of those that compute (not the
# runtime's, _RUNTIME, which the interpreter itself runs on).
_SYSTEM_LIBRARY_FOLDERS = ("/usr/lib", "/usr/lib64", "/usr/local/lib", "/lib", "/lib64")
_NUMERIC_MARKS = ("blas", "lapack", "mkl", "blis", "armpl", "fftw", "atlas", "dnnl", "nvpl", "gsl")


def _package_folder(path: str) -> str | None:
    """The installed package a shared object at ``path`` belongs to (``pillow`` for
    ``.../site-packages/pillow.libs/libwebp.so``, ``PIL`` for its ``_imaging`` module), or None: not
    under an installed packages' folder, or a bundled runtime library (_RUNTIME)."""
    parts = path.split("/")
    root = max((i for i, part in enumerate(parts) if part in _PACKAGE_ROOTS), default=-1)
    if root < 0 or root + 1 >= len(parts) or os.path.basename(path).startswith(_RUNTIME):
        return None
    package = parts[root + 1].removesuffix(".libs")
    if root + 2 == len(parts):  # a module of its own at the top (foo.cpython-311-x86_64-linux-gnu.so)
        package = package.split(".")[0]
    return package


def installed_package(path: str) -> str | None:
    """The installed package a shared object at ``path`` belongs to (_package_folder), ``system`` for a
    numeric library of the operating system's (a BLAS, LAPACK, FFTW...), but None for one of _OWN_STACK
    and _OWN_FAMILIES: their code is the candidate's to run."""
    package = _package_folder(path)
    if package is None:
        name = os.path.basename(path).lower()
        system = os.path.dirname(path).startswith(_SYSTEM_LIBRARY_FOLDERS)
        return "system" if system and any(mark in name for mark in _NUMERIC_MARKS) else None
    if package in _OWN_STACK or package.startswith(_OWN_FAMILIES):
        return None
    return package


def installed_label(name: str, path: str) -> str:
    """A library's name in a sample, with the installed package it belongs to, as op_census reads it."""
    package = installed_package(path)
    return f"{name} [installed: {package}]" if package else name


def _package_roots() -> list[str]:
    """The folders installed packages lie in: the site-packages and dist-packages of this environment,
    of the interpreter it was made from (a candidate can read that one's packages too, a virtual
    environment's ``include-system-site-packages`` whatever) and of the system's Pythons, and wherever
    torch, numpy and scipy were found (an editable install, PYTHONPATH, pip --target)."""
    roots = [*site.getsitepackages(), site.getusersitepackages(), *sys.path]
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, "/usr", "/usr/local"}:
        roots += glob.glob(os.path.join(prefix, "lib*", "python3*", "*-packages"))
    roots = [r for r in roots if os.path.basename(r.rstrip("/")) in _PACKAGE_ROOTS]
    for package in ("torch", "numpy", "scipy"):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        roots += [os.path.dirname(p.rstrip("/")) for p in (spec.submodule_search_locations or [])] if spec else []
    return sorted({os.path.realpath(r) for r in roots if os.path.isdir(r)})


def _system_numeric_libraries() -> list[str]:
    """The operating system's numeric libraries (installed_package's ``system``), in its library folders
    and the folders one level down (Debian keeps its BLAS alternatives in openblas-pthread/ and the like)."""
    paths = []
    for top in _SYSTEM_LIBRARY_FOLDERS:
        for folder in [top, *glob.glob(os.path.join(top, "*")), *glob.glob(os.path.join(top, "*", "*"))]:
            if not os.path.isdir(folder) or os.path.islink(folder):
                continue
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                path = os.path.join(folder, name)
                if ".so" in name and installed_package(path) == "system" and os.path.isfile(path):
                    paths.append(os.path.realpath(path))
    return sorted(set(paths))


# Bytes compared around an instruction pointer, and the share of them that must agree. Unrelated code
# agrees on little: the best of every place tried, for 56,000 instruction pointers spread over the
# interpreter's own code (libpython, libc, libstdc++, libm, libgomp) against every installed library,
# was 41% (99.9% of them under 24%), common opcode and zero bytes. A copy agrees on every byte it did
# not change, and it can change only bytes that never run (padding, cold paths) without breaking the
# code. 80% stays well above the unrelated worst case and lets a copy change up to 51 of the 256
# bytes around every sampled instruction.
WINDOW_BYTES = 256
MATCH_SHARE = 0.8
# Linker stubs (PLT entries, .init, .fini) are the same in every shared object built by one toolchain
# and lie at the same offsets in small ones: a match there says nothing about whose code it is.
_STUB_SECTIONS = (".plt", ".init", ".fini")
_PF_X, _SHF_EXECINSTR = 1, 4


@functools.cache
def _package_libraries() -> tuple[list[str], list[str]]:
    """The shared objects under the package roots, walked once: every installed package's (their bundled
    ``<pkg>.libs`` included) but _RUNTIME's, and the _RUNTIME copies that packages bundle."""
    installed, runtime = [], []
    for root in _package_roots():
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                if ".so" in name:
                    (runtime if name.startswith(_RUNTIME) else installed).append(os.path.join(dirpath, name))
    return installed, runtime


def _installed_libraries() -> list[str]:
    """Every installed package's shared objects but _RUNTIME's, and the system's numeric libraries."""
    paths = _system_numeric_libraries() + _package_libraries()[0]
    # the largest first: libtorch_cpu holds most of PyTorch's compute, so most matches end there
    return sorted(set(paths), key=lambda p: -os.path.getsize(p) if os.path.isfile(p) else 0)


@dataclass(frozen=True)
class _Segment:
    """A PT_LOAD segment: where its bytes lie in the file and where they are loaded."""

    offset: int
    size: int
    vaddr: int
    executable: bool

    @property
    def first_page(self) -> int:  # the file offset mmap maps the segment from
        return self.offset - self.offset % _PAGE


class _KnownLibrary:
    """One installed library's file, mapped read-only, with where its code lies in it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = os.path.basename(path)
        self.label = installed_label(self.name, path)  # as a sample names it
        with open(path, "rb") as f:  # the host's own installed file, not one a candidate can swap
            self.image = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
            st = os.fstat(f.fileno())
            self.file = (st.st_dev, st.st_ino)  # as a process's memory map names it
        self.bytes = np.frombuffer(self.image, dtype=np.uint8)
        self.loads, self.code = self._layout()  # the data segments too, to find its load address
        self.segments = [s for s in self.loads if s.executable]

    def _layout(self) -> tuple[list[_Segment], list[tuple[int, int]]]:
        """Its PT_LOAD segments, and the file ranges of its executable sections other than stubs
        (the executable segments where it has no section headers)."""
        image = self.image
        if image[:4] != b"\x7fELF" or image[4] != 2:
            raise ValueError("not a 64-bit ELF file")
        phoff, shoff = struct.unpack_from("<QQ", image, 0x20)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", image, 0x36)
        segments = []
        for i in range(phnum):
            p_type, p_flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", image,
                                                                                      phoff + i * phentsize)  # fmt: skip
            if p_type == 1:
                segments.append(_Segment(p_offset, p_filesz, p_vaddr, bool(p_flags & _PF_X)))
        sections = [struct.unpack_from("<IIQQQQ", image, shoff + i * shentsize) for i in range(shnum)]
        if not sections or shstrndx >= shnum:
            return segments, [(s.offset, s.offset + s.size) for s in segments if s.executable]
        names_at = sections[shstrndx][4]
        code = []
        for name_offset, _type, flags, _addr, offset, size in sections:
            name = image[names_at + name_offset : image.find(b"\0", names_at + name_offset)].decode("latin-1")
            if flags & _SHF_EXECINSTR and not name.startswith(_STUB_SECTIONS):
                code.append((offset, offset + size))
        return segments, sorted(code)

    def is_code(self, offset: int) -> bool:
        i = bisect.bisect_right(self.code, (offset, float("inf"))) - 1
        return i >= 0 and offset < self.code[i][1]

    def vaddr(self, offset: int, executable: bool = True) -> int | None:
        """The virtual address of file ``offset`` (mappings start at a segment's first page, which
        may begin before the segment's own offset: the same difference holds there). A page two
        segments share goes by the one that is ``executable`` or not, as its mapping is."""
        within = [s for s in self.loads if s.first_page <= offset < s.offset + s.size]
        segment = next((s for s in within if s.executable == executable), within[0] if within else None)
        return None if segment is None else offset - segment.offset + segment.vaddr

    def offset_of(self, vaddr: int) -> int | None:
        segment = next((s for s in self.segments if s.vaddr <= vaddr < s.vaddr + s.size), None)
        return None if segment is None else vaddr - segment.vaddr + segment.offset

    def agrees(self, window: np.ndarray, ip_index: int, offset: int) -> bool:
        """Whether ``window`` (the instruction pointer at ``ip_index``) is this library's bytes with
        the instruction pointer at file ``offset``, but for at most 1 - MATCH_SHARE of them."""
        if window[ip_index] != self.bytes[offset]:
            return False  # the instruction that ran is not this one: most places end here, cheaply
        lo = offset - ip_index
        first, last = max(0, -lo), min(len(window), len(self.bytes) - lo)
        if last - first < WINDOW_BYTES // 2:
            return False
        same = np.count_nonzero(window[first:last] == self.bytes[lo + first : lo + last])
        return same >= MATCH_SHARE * (last - first)

    def function_at(self, offset: int) -> str:
        vaddr = self.vaddr(offset)
        elf = _elf(self.path)
        return elf.function_at(vaddr) if elf is not None and vaddr is not None else ""


# Code at any offset. A copy may hold a library's code anywhere in its file, where none of the places
# KnownLibraries tries lines up: a page further on (a page inserted before its code, the program headers
# fixed), or the whole image moved by a few bytes with its relocations fixed. So the code of the
# libraries that compute is indexed by anchors: the 8-byte strings in it whose hash falls in one of
# ANCHOR_EVERY, chosen by their bytes alone, so that a copy at any offset holds the same anchors at
# the same distances. The anchors in the ANCHOR_WINDOW bytes read around a sample are looked up, and
# each place they point to is matched as the other places are (MATCH_SHARE of WINDOW_BYTES). Not
# indexed: the kernel backends' compilers and the CUDA stack (_OWN_STACK, _OWN_FAMILIES but PyTorch),
# whose code a candidate may run under any name.
ANCHOR_EVERY = 128  # some 3 million anchors in 400 MB of code; a 1 KiB window holds 8 on average
ANCHOR_WINDOW = 1024
ANCHOR_MAX_PLACES = 64  # an anchor found more often (padding, a common prologue) tells nothing
_ANCHOR_HASH = np.uint64(0x9E3779B97F4A7C15)
_ANCHOR_CHUNK = 1 << 22


def _computes(path: str) -> bool:
    """Whether a library's code is indexed by anchors (see above): any installed package's, PyTorch's."""
    return installed_package(path) is not None or _package_folder(path) == "torch"


def _anchor_hashes(data, offset: int, count: int) -> np.ndarray:
    """The hash of each of the ``count`` 8-byte strings of ``data`` from ``offset`` on."""
    grams = np.ndarray((count,), dtype="<u8", buffer=data, offset=offset, strides=(1,))
    return grams * _ANCHOR_HASH


def _anchored(hashes: np.ndarray) -> np.ndarray:
    return np.flatnonzero((hashes >> np.uint64(57)) == 0)  # 1 in 128


def _anchor_keys(hashes: np.ndarray) -> np.ndarray:
    return ((hashes >> np.uint64(25)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


class _Anchors:
    """The anchors of some libraries' code (``libraries[i]`` None: not indexed), by their hash, but
    those of ``common`` code: the runtime libraries' (libstdc++, libc, libpython...) that installed
    libraries also hold (libstdc++'s newer functions linked into every wheel), which would name the
    runtime for them."""

    def __init__(self, libraries: list, common: list) -> None:
        keys, places, owners = [], [], []
        for owner, library in enumerate(libraries):
            if library is not None:
                for at, key in _anchors_in(library):
                    keys.append(key)
                    places.append(at.astype(np.uint32))
                    owners.append(np.full(len(at), owner, dtype=np.uint16))
        self.keys = np.concatenate(keys) if keys else np.zeros(0, dtype=np.uint32)
        self.places = np.concatenate(places) if places else np.zeros(0, dtype=np.uint32)
        self.owners = np.concatenate(owners) if owners else np.zeros(0, dtype=np.uint16)
        shared = [key for library in common for _at, key in _anchors_in(library)]
        if shared:
            distinct = ~np.isin(self.keys, np.concatenate(shared))
            self.keys, self.places, self.owners = self.keys[distinct], self.places[distinct], self.owners[distinct]
        order = np.argsort(self.keys, kind="stable")
        self.keys, self.places, self.owners = self.keys[order], self.places[order], self.owners[order]

    def starts_of(self, window: np.ndarray) -> list[tuple[int, int]]:
        """(library, file offset) pairs where ``window`` could begin: those that two of the anchors it
        holds or more point to (a copy holds them all at the same distances)."""
        if len(window) < 8 or not len(self.keys):
            return []
        with np.errstate(over="ignore"):
            hashes = _anchor_hashes(window, 0, len(window) - 7)
        at = _anchored(hashes)
        keys = _anchor_keys(hashes[at])
        lows, highs = np.searchsorted(self.keys, keys, "left"), np.searchsorted(self.keys, keys, "right")
        votes: Counter = Counter()
        for q, lo, hi in zip(at.tolist(), lows.tolist(), highs.tolist()):
            if hi - lo <= ANCHOR_MAX_PLACES:
                votes.update((owner, place - q) for owner, place in zip(self.owners[lo:hi].tolist(),
                                                                         self.places[lo:hi].tolist()) if place >= q)  # fmt: skip
        return [start for start, n in votes.most_common() if n >= 2]


def _anchors_in(library) -> list[tuple[np.ndarray, np.ndarray]]:
    """(file offsets, keys) of the anchors in a library's code, a chunk at a time."""
    out = []
    with np.errstate(over="ignore"):
        for lo, hi in library.code:
            for start in range(lo, hi - 7, _ANCHOR_CHUNK):
                hashes = _anchor_hashes(library.image, start, min(_ANCHOR_CHUNK, hi - 7 - start))
                at = _anchored(hashes)
                out.append((at + start, _anchor_keys(hashes[at])))
    return out


def _runtime_libraries(known_files: set) -> list[str]:
    """The shared objects this interpreter runs on that are no installed package's (libpython, libc,
    libstdc++...), and the copies of them that packages bundle (_RUNTIME)."""
    paths = {m.path for m in read_maps(os.getpid()) if m.executable and m.path.startswith("/")
             and m.file not in known_files and not m.path.endswith(" (deleted)")}  # fmt: skip
    return sorted(paths | set(_package_libraries()[1]))


class KnownLibraries:
    """Tells installed libraries' code by its bytes, wherever a mapped file of another name holds it."""

    MEMO_ENTRIES = 1 << 16

    def __init__(self, paths: list[str] | None = None) -> None:
        self.libraries: list[_KnownLibrary] = []
        for path in _installed_libraries() if paths is None else paths:
            try:
                self.libraries.append(_KnownLibrary(path))
            except (OSError, ValueError, struct.error):
                continue  # not an ELF file (a linker script named .so): nothing of it runs
        self.by_name = {library.name: library for library in reversed(self.libraries)}
        self.by_file = {library.file: library for library in self.libraries}
        self.files = set(self.by_file)
        self.memo: dict[tuple, tuple[str, str] | None] = {}
        common = []
        for path in _runtime_libraries(self.files) if paths is None else []:
            try:
                common.append(_KnownLibrary(path))
            except (OSError, ValueError, struct.error):
                continue
        # The runtime's own files (libpython, libc...), by device and inode: the host's, which no candidate
        # can write, and which hold no installed library's compute (their code shared with one is not
        # anchored): their samples go by their name without a search of their bytes, which cost some 3 ms
        # per distinct instruction pointer, 10 s of an interpreted Triton kernel's evaluation (2026-11-28).
        self.runtime_files = {library.file for library in common}
        self.anchors = _Anchors([library if _computes(library.path) else None for library in self.libraries], common)

    def installed(self, mapping: Mapping) -> bool:
        """Whether a mapping is of an installed library's own file (by device and inode: a name proves
        nothing), so that its samples may go by its name and symbols."""
        return not mapping.path.endswith(" (deleted)") and mapping.file in self.files

    def runtime(self, mapping: Mapping) -> bool:
        """Whether a mapping is of one of the runtime's own files (runtime_files), by device and inode."""
        return not mapping.path.endswith(" (deleted)") and mapping.file in self.runtime_files

    def identify(self, window: bytes, ip_index: int, file_offset: int, mapping_offset: int,
                 at_address: tuple[tuple[str, int], ...] = ()) -> tuple[str, str] | None:  # fmt: skip
        """(library, function) when ``window``, the bytes around an instruction pointer at
        ``window[ip_index]``, are an installed library's code; otherwise None.

        ``file_offset`` is where the instruction pointer lies in the mapped file, ``mapping_offset``
        the file offset its mapping starts from, and ``at_address`` the file offsets, per library
        loaded in the process under its own name, of the instruction pointer's address there."""
        key = (window, ip_index, file_offset, mapping_offset, at_address)
        if key in self.memo:
            return self.memo[key]
        if len(self.memo) >= self.MEMO_ENTRIES:
            self.memo.clear()
        found = self.memo[key] = self._identify(window, ip_index, file_offset, mapping_offset, at_address)
        return found

    def _identify(self, window: bytes, ip_index: int, file_offset: int, mapping_offset: int,
                  at_address: tuple[tuple[str, int], ...]) -> tuple[str, str] | None:  # fmt: skip
        data = np.frombuffer(window, dtype=np.uint8)
        # the places below are matched on WINDOW_BYTES around the instruction pointer; the anchors are
        # looked for in all of ``window``
        first = max(0, ip_index - WINDOW_BYTES // 2)
        near, near_index = data[first : ip_index + WINDOW_BYTES // 2], ip_index - first
        for library in self.libraries:
            places = {file_offset}  # a copy with the same layout
            for segment in library.segments:
                places.add(segment.first_page + file_offset)  # a file holding this segment alone
                places.add(segment.first_page + file_offset - mapping_offset)  # mapped from where it starts
            # remapped over the original's own address
            places.update(offset for name, offset in at_address if name == library.name)
            for offset in sorted(places):
                if library.is_code(offset) and library.agrees(near, near_index, offset):
                    return library.label, library.function_at(offset)
        for owner, start in self.anchors.starts_of(data):
            library, offset = self.libraries[owner], start + ip_index
            if library.is_code(offset) and library.agrees(near, near_index, offset) and library.agrees(data, ip_index,
                                                                                                       offset):  # fmt: skip
                return library.label, library.function_at(offset)
        return None

    MAX_BASES = 16  # per library: more mappings of one library than a loader makes are decoys

    def load_bases(self, maps: list[Mapping]) -> dict[str, set[int]]:
        """Where each installed library mapped in a process under its own name is loaded (the
        address of its virtual address 0), from each of its mappings (``maps``: all of them, as
        read_maps reads them): when only its code is mapped from a copy, its data segments stay
        mapped under its name. Every base any mapping implies is kept, so that a mapping of the file
        made elsewhere (mmap of it as data) hides no other."""
        bases: dict[str, set[int]] = {}
        for m in maps:
            library = self.by_name.get(os.path.basename(m.path))
            if library is None or len(bases.get(library.name, ())) >= self.MAX_BASES:
                continue
            vaddr = library.vaddr(m.offset, executable=m.executable)
            if vaddr is not None:
                bases.setdefault(library.name, set()).add(m.start - vaddr)
        return bases


@functools.cache
def _known_libraries() -> KnownLibraries:
    return KnownLibraries()


# Executable memory mapped from no file: code generated at run time (oneDNN's and MKL's JIT kernels).
ANONYMOUS_CODE = "[anonymous]"
# A sample of a process whose memory map the host could not read (gone, or made unreadable to it).
UNREADABLE = "[unreadable]"
# A sample at an address no executable mapping of the process covers when the host reads its map
# after the block: the code that ran there was unmapped (or made unexecutable) since.
UNMAPPED = "[unmapped]"
# A sample at an address where memory was mapped, or its protection changed, after it ran: the map the
# host reads after the block shows what came later, not what ran.
REMAPPED = "[remapped]"
# A sample in a file's code whose bytes, when it ran, the host cannot vouch for: pages that could be
# written (a writable mapping, or one the process made writable while sampled; a file mapped shared
# and writable anywhere in the runner; pages copied on write), a file written or replaced since the
# sampling began (a private mapping shows the file's new bytes), a deleted file (still writable
# through a descriptor), or an address whose mapping changed with no record of it (mremap moves pages
# without one). The host reads the bytes after the block: only code that cannot have changed since it
# ran is named by them.
UNVERIFIED = "[unverified code]"
# The kernel's own code mapped into every process (clock_gettime and friends).
_KERNEL_CODE = ("[vdso]", "[vsyscall]")
# A file's ctime comes from the kernel's coarse clock, up to a tick behind the write: a file changed this
# little before the sampling began may have been changed after it.
CTIME_SLACK_NS = 50_000_000


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    offset: int
    path: str  # '' for anonymous memory
    file: tuple[int, int] = (0, 0)  # (device, inode) of the mapped file
    executable: bool = True
    writable: bool = False
    shared: bool = False
    copied: bool = False  # holds pages written since they were mapped: not the file's bytes (smaps)

    def code_at(self, ip: int) -> tuple[tuple[int, int], int] | None:
        """What ``ip`` runs as far as a map tells: (file, offset in it); None in anonymous memory."""
        return None if self.file == (0, 0) else (self.file, ip - self.start + self.offset)


def read_maps(pid: int, copied: bool = False) -> list[Mapping]:
    """The mappings of a process, by start address ([] when it is gone or unreadable); with ``copied``,
    read from smaps, which also tells the mappings that hold pages copied on write."""
    out = []
    try:
        with open(f"/proc/{pid}/{'smaps' if copied else 'maps'}") as f:
            for line in f:
                fields = line.split(None, 5)
                if fields and fields[0].endswith(":"):  # smaps: a line about the mapping above
                    if fields[0] == "Anonymous:" and out and len(fields) > 1 and fields[1] != "0":
                        out[-1] = dataclasses.replace(out[-1], copied=True)
                    continue
                if len(fields) < 5:
                    continue
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                path = fields[5].strip() if len(fields) > 5 else ""
                major, minor = (int(x, 16) for x in fields[3].split(":"))
                perms = fields[1]
                out.append(Mapping(lo, hi, int(fields[2], 16), path, (os.makedev(major, minor), int(fields[4])),
                                   "x" in perms, "w" in perms, perms.endswith("s")))  # fmt: skip
    except OSError:
        return []
    return sorted(out, key=lambda m: m.start)


def _covering(maps: list[Mapping], starts: list[int], ip: int) -> Mapping | None:
    i = bisect.bisect_right(starts, ip) - 1
    return maps[i] if i >= 0 and ip < maps[i].end else None


def load_bases_of(pids: list[int]) -> dict[int, dict[str, set[int]]]:
    """Per process, where the installed libraries it has loaded under their own names lie
    (KnownLibraries.load_bases). Read before any candidate code runs, these are the loader's own:
    no decoy mapping made later can crowd them out of a later reading (MAX_BASES)."""
    known = _known_libraries()
    return {pid: known.load_bases(read_maps(pid)) for pid in pids}


class _MappingsMade:
    """One process's mappings made while sampled (MappingMade), found by address."""

    BUCKET_SHIFT = 21  # 2 MiB
    MAX_BUCKETS = 64  # a wider mapping is kept aside and looked at for every address

    def __init__(self, made: list[MappingMade]) -> None:
        self.buckets: dict[int, list[MappingMade]] = {}
        self.wide: list[MappingMade] = []
        self.memo: dict[int, list[MappingMade]] = {}
        for m in made:  # in time order, and so is every list
            lo, hi = m.start >> self.BUCKET_SHIFT, (m.end - 1) >> self.BUCKET_SHIFT
            if hi - lo >= self.MAX_BUCKETS:
                self.wide.append(m)
            else:
                for bucket in range(lo, hi + 1):
                    self.buckets.setdefault(bucket, []).append(m)

    def over(self, ip: int) -> list[MappingMade]:
        """Those over ``ip``, in time order."""
        found = self.memo.get(ip)
        if found is None:
            found = [m for m in self.buckets.get(ip >> self.BUCKET_SHIFT, ()) if m.start <= ip < m.end]
            wide = [m for m in self.wide if m.start <= ip < m.end]
            found = self.memo[ip] = sorted(found + wide, key=lambda m: m.time_ns) if wide else found
        return found


def _overlapping_code(made: list[MappingMade], before: dict[int, list[Mapping]]) -> list[MappingMade]:
    """The mappings made over code: executable ones, and any other over memory that was executable when
    the sampling began or was made so since (the rest, PyTorch's tensors, cannot bear on a sample)."""
    code = sorted([(m.start, m.end) for maps in before.values() for m in maps if m.executable]
                  + [(m.start, m.end) for m in made if m.executable])  # fmt: skip
    merged: list[list[int]] = []
    for lo, hi in code:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    starts = [lo for lo, _ in merged]

    def over_code(m: MappingMade) -> bool:
        i = bisect.bisect_right(starts, m.end - 1) - 1  # the last range starting before its end
        return i >= 0 and merged[i][1] > m.start

    return [m for m in made if m.executable or over_code(m)]


def _as_mapping(m: MappingMade) -> Mapping:
    path = "" if m.path == "//anon" else m.path
    return Mapping(m.start, m.end, m.offset, path, m.file, m.executable, m.writable, m.shared)


class FunctionNames:
    """Instruction pointers of the processes of one runner to (shared object, function).

    Sampled (:meth:`note_before` when the sampling begins, :meth:`note_mapped` and :meth:`refresh`
    after each block), an instruction pointer is named by the bytes the host reads after the block
    only where those are the bytes that ran: the process's mapping over it, the one it had when the
    sampling began or the last one the kernel recorded it making before the sample, still in place,
    of a file nothing could have written since (UNVERIFIED, REMAPPED)."""

    def __init__(self, first_bases: dict[int, dict[str, set[int]]] | None = None) -> None:
        self.maps: dict[int, list[Mapping]] = {}  # per process, its executable mappings after the block
        self.starts: dict[int, list[int]] = {}
        self.load_bases: dict[int, dict[str, set[int]]] = {}  # per process, known libraries loaded by name
        # load_bases_of, before the candidate's code ran, for every process of the runner's: one it forked
        # later inherited the same mappings
        self.first_bases: dict[str, set[int]] = {}
        for bases in (first_bases or {}).values():
            for name, places in bases.items():
                self.first_bases.setdefault(name, set()).update(places)
        self.before: dict[int, list[Mapping]] = {}  # per process, every mapping when the sampling began
        self.before_starts: dict[int, list[int]] = {}
        self.since_ns: int | None = None  # CLOCK_REALTIME then, as files' ctimes are
        self.made: dict[int, _MappingsMade] = {}  # per process, mappings made over code while sampled
        self.over_code: list[MappingMade] = []  # all of them (_overlapping_code)
        # (device, inode) -> file offset ranges mapped shared and writable by some process of the runner
        self.shared_writes: dict[tuple[int, int], set[tuple[int, int]]] = {}
        self.stats: dict[tuple[int, str], os.stat_result | None] = {}
        self.symbol_bytes_left = SYMBOL_BYTES_PER_RUNNER  # of files not installed (_symbols)
        self.symbols_read: set[tuple[str, int]] = set()  # the readings charged to it: (file, limit)
        self.memo: dict[tuple, tuple[str, str]] = {}

    def note_before(self, pids: list[int]) -> None:
        """The memory maps as the sampling begins (the runner stopped meanwhile): what each address held
        then. From here on each change the kernel records is followed (note_mapped)."""
        self.since_ns = time.time_ns()
        for pid in pids:
            maps = read_maps(pid, copied=True)
            self.before[pid], self.before_starts[pid] = maps, [m.start for m in maps]
            self._note_shared_writes(maps)

    def _note_shared_writes(self, maps) -> None:
        for m in maps:
            if m.shared and m.writable and m.file != (0, 0):
                self.shared_writes.setdefault(m.file, set()).add((m.offset, m.offset + m.end - m.start))

    def note_mapped(self, mapped: list[MappingMade]) -> None:
        """The mappings the sampler saw made (Sampler.mapped, in time order), all of them."""
        by_pid: dict[int, list[MappingMade]] = {}
        self.over_code = _overlapping_code(mapped, self.before)
        for m in self.over_code:
            by_pid.setdefault(m.pid, []).append(m)
        self.made = {pid: _MappingsMade(made) for pid, made in by_pid.items()}
        self._note_shared_writes(mapped)
        self.memo.clear()

    def refresh(self, pids) -> None:
        """Re-read the memory maps (after a block: what it loaded is mapped by then)."""
        known = _known_libraries()
        for pid in pids:
            every = read_maps(pid, copied=self.since_ns is not None)
            self._note_shared_writes(every)
            maps = [m for m in every if m.executable]
            if maps:
                self.maps[pid], self.starts[pid] = maps, [m.start for m in maps]
                bases = known.load_bases(every)
                for name, places in self.first_bases.items():
                    bases.setdefault(name, set()).update(places)
                self.load_bases[pid] = bases
            else:  # gone, or made unreadable since: what it ran is not known (UNREADABLE), not its old map
                self.maps.pop(pid, None)
                self.starts.pop(pid, None)
        self.stats.clear()
        self.memo.clear()

    def locate(self, pid: int, ip: int, time_ns: int | None = None) -> tuple[str, str]:
        """What ran at ``ip`` in process ``pid`` (at ``time_ns``, the sample's time, once the sampling
        began: what the map after the block shows only where it is what ran then, see the class)."""
        if time_ns is None or self.since_ns is None:
            key: tuple = (pid, ip)
            found = self.memo.get(key)
            if found is None:
                found = self.memo[key] = self._locate(pid, ip)
            return found
        made = self.made[pid].over(ip) if pid in self.made else []
        if made and made[-1].time_ns > time_ns:
            return REMAPPED, ""
        key = (pid, ip, made[-1].time_ns if made else -1)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._verified(pid, ip, made)
        return found

    def _verified(self, pid: int, ip: int, made: list[MappingMade]) -> tuple[str, str]:
        now = self._mapping_at(pid, ip)
        if now is None:
            return self._locate(pid, ip)  # unreadable or unmapped
        code = now.code_at(ip)
        was = _as_mapping(made[-1]) if made else self._before_at(pid, ip, code)
        if was is None or not was.executable or was.code_at(ip) != code:
            return UNVERIFIED, ""  # what ran there changed with no record of it
        if code is not None and self._may_have_changed(pid, ip, now, code):
            return UNVERIFIED, ""
        return self._name_in(pid, now, ip)

    def _before_at(self, pid: int, ip: int, code) -> Mapping | None:
        """The mapping over ``ip`` when the sampling began: the process's own, or for one started since
        (forked, with its parent's mappings) any process's that held the same code there."""
        if pid in self.before:
            return _covering(self.before[pid], self.before_starts[pid], ip)
        for other, maps in self.before.items():
            m = _covering(maps, self.before_starts[other], ip)
            if m is not None and m.code_at(ip) == code:
                return m
        return None

    def _may_have_changed(self, pid: int, ip: int, now: Mapping, code: tuple[tuple[int, int], int]) -> bool:
        """Whether the file's code at ``ip`` may hold other bytes now than when it ran (UNVERIFIED)."""
        if now.writable or now.shared or now.copied:
            return True
        file, offset = code
        if any(lo <= offset < hi for lo, hi in self.shared_writes.get(file, ())):
            return True
        # Its pages made writable, or written, in this process or (for one started since, which inherited
        # them from one of the others) in any: the same file at the same place, writable in a mapping made
        # or in the first map
        for other in [pid] if pid in self.before else sorted({pid, *self.before, *self.made}):
            if other in self.made and any(m.writable and _as_mapping(m).code_at(ip) == code
                                          for m in self.made[other].over(ip)):  # fmt: skip
                return True
            if other in self.before:
                first = _covering(self.before[other], self.before_starts[other], ip)
                if first is not None and first.code_at(ip) == code and (first.writable or first.copied):
                    return True
        return self._file_changed(pid, now)

    def _file_changed(self, pid: int, now: Mapping) -> bool:
        """Whether the mapped file was deleted, replaced or written since the sampling began."""
        if now.path.endswith(" (deleted)") or not now.path.startswith("/"):
            return True
        key = (pid, now.path)
        if key not in self.stats:
            try:
                self.stats[key] = os.stat(f"/proc/{pid}/root{now.path}")
            except OSError:
                self.stats[key] = None
        st = self.stats[key]
        if st is None:
            return True
        # another file at its path (where stat and the map speak of the same file system: an overlay
        # gives its own numbers to the files it shows)
        if st.st_dev == now.file[0] and st.st_ino != now.file[1]:
            return True
        return st.st_ctime_ns >= self.since_ns - CTIME_SLACK_NS

    def _mapping_at(self, pid: int, ip: int) -> Mapping | None:
        maps = self.maps.get(pid)
        return _covering(maps, self.starts[pid], ip) if maps else None

    def _locate(self, pid: int, ip: int) -> tuple[str, str]:
        if not self.maps.get(pid):
            return UNREADABLE, ""
        m = self._mapping_at(pid, ip)
        return (UNMAPPED, "") if m is None else self._name_in(pid, m, ip)

    def _name_in(self, pid: int, m: Mapping, ip: int) -> tuple[str, str]:
        """(library, function) at ``ip`` in mapping ``m`` of process ``pid``."""
        if m.path == "//anon":  # perf's name for anonymous memory
            return ANONYMOUS_CODE, ""
        if m.path in _KERNEL_CODE:
            return m.path, ""
        if not m.path or m.path.startswith("["):
            # executable memory of no file ([heap], [stack], [anon:NAME] included): code made at run time
            return ANONYMOUS_CODE, ""
        path = m.path.replace(" (deleted)", "")
        library = os.path.basename(path)
        known = _known_libraries()
        if not known.installed(m) and not known.runtime(m):
            # Any file may hold a known library's code, under any name (a known library's included):
            # its bytes tell. Only the installed file itself (or the runtime's own) goes by its name.
            found = self._known_code(pid, m, path, ip, known)
            if found is not None:
                return found
            if library in known.by_name:
                library = f"{library} (a file other than the installed one)"
        library = installed_label(library, path)
        elf = self._symbols(pid, path, known.installed(m))
        if elf is None:
            return library, ""
        vaddr = elf.virtual_address(ip - m.start + m.offset)
        return library, elf.function_at(vaddr) if vaddr is not None else ""

    def _symbols(self, pid: int, path: str, installed: bool) -> _ElfFunctions | None:
        """The file's function symbols, as the process sees it (an isolated candidate's /tmp is a tmpfs of
        its own); of a file not installed, within what is left of SYMBOL_BYTES_PER_RUNNER."""
        limit = 0 if installed else max(1, min(MAX_CANDIDATE_SYMBOL_BYTES, self.symbol_bytes_left))
        elf = _elf(f"/proc/{pid}/root{path}", limit) or _elf(path, limit)
        if elf is not None and not installed and (elf.path, limit) not in self.symbols_read:
            self.symbols_read.add((elf.path, limit))  # each reading of it: _elf reads again at another limit
            self.symbol_bytes_left -= elf.symbol_bytes
        return elf

    def _known_code(self, pid: int, m: Mapping, path: str, ip: int, known: KnownLibraries) -> tuple[str, str] | None:
        """(library, function) when the code at ``ip`` is an installed library's (KnownLibraries), else None.
        The window stays within the mapping: beyond it lie other files' pages, at other offsets."""
        lo, hi = max(m.start, ip - ANCHOR_WINDOW // 2), min(m.end, ip + ANCHOR_WINDOW // 2)
        window = _read_memory(pid, lo, hi - lo) or _read_mapped_file(f"/proc/{pid}/root{path}", m.offset + lo - m.start,
                                                                     hi - lo)  # fmt: skip
        if len(window) != hi - lo:
            return None
        at_address = []
        for name, bases in self.load_bases.get(pid, {}).items():
            for base in sorted(bases):
                offset = known.by_name[name].offset_of(ip - base)
                if offset is not None:
                    at_address.append((name, offset))
        return known.identify(window, ip - lo, ip - m.start + m.offset, m.offset, tuple(at_address))


def _read_memory(pid: int, address: int, size: int) -> bytes:
    """``size`` bytes of the process's memory at ``address`` (the code that runs there, whatever file
    its mapping names and whatever that file holds now), or b'' where the host may not read them."""
    try:
        fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        return os.pread(fd, size, address)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _read_mapped_file(path: str, offset: int, size: int) -> bytes:
    try:
        with _open_mapped_file(path) as f:
            f.seek(offset)
            return f.read(size)
    except OSError:
        return b""


def tally(samples: list[Sample], names: FunctionNames) -> Counter:
    """Samples per (shared object, function)."""
    return Counter(names.locate(s.pid, s.ip, s.time_ns) for s in samples)


class Profiles:
    """Both runners sampled while they are timed: per side, samples per phase and function.

    A phase is "forward" for a sample inside one of the call spans the runner reported
    (timing.time_calls), "around" otherwise (staging, checksum, between calls). Each side's
    record also keeps, per phase, how many samples each call had ("per_call"), each call's samples
    by the host's own window ("host_calls"), which of those the operator census recorded
    ("censused") and the samples inside the spans in which its runner says the CPU's Triton
    interpreter ran its kernels ("interpreted")."""

    def __init__(self, period_ns: int = MIN_PERIOD_NS) -> None:
        _known_libraries()  # indexed now (238 libraries in ~6 s here), not between two timed blocks
        self.period_ns = period_ns
        self.samplers: dict[str, Sampler] = {}
        self.names: dict[str, FunctionNames] = {}
        self.phases: dict[str, dict[str, Counter]] = {}
        self.pending: dict[str, list[Sample]] = {}
        # Per side, the samples the kernel could not write during its blocks (a ring was full): what
        # they saw is unknown.
        self.lost: Counter = Counter()
        self.lost_before: dict[str, int] = {}
        # A block's rings are drained by the host's thread after each call and, while a call runs, by a
        # drainer thread of its own (_drain_while_timed); the lock keeps the two from reading a ring at once.
        self._lock = threading.Lock()
        self._drainers: dict[str, tuple[threading.Thread, threading.Event]] = {}

    def attach(self, side: str, pids: list[int], first_bases: dict[int, dict[str, set[int]]] | None = None) -> None:
        """Once per runner, while none of its threads can start another (the candidate is stopped);
        ``first_bases``: its libraries' load addresses read before its code ran (load_bases_of)."""
        sampler = self.samplers.setdefault(side, Sampler(self.period_ns))
        sampler.attach(pids)
        self.names.setdefault(side, FunctionNames(first_bases)).note_before(pids)
        self.phases.setdefault(side, {"forward": Counter(), "around": Counter(), "calls": 0, "interpreted": Counter()})

    def begin(self, side: str) -> None:
        """A block of ``side`` starts: what its rings hold now is not its; from now until :meth:`end` a
        thread drains them whenever one fills (a call long beside the period must not lose samples)."""
        if side in self.samplers:
            self._stop_drainer(side)
            with self._lock:
                self.samplers[side].drain()  # what came before the block (and what got lost then) is not its
                self.pending[side] = []
                self.lost_before[side] = self.samplers[side].lost
            stop = threading.Event()
            thread = threading.Thread(target=self._drain_while_timed, args=(side, stop), name="ring-drainer",
                                      daemon=True)  # fmt: skip
            self._drainers[side] = (thread, stop)
            thread.start()

    def _drain_while_timed(self, side: str, stop: threading.Event) -> None:
        sampler = self.samplers[side]
        while not stop.wait(DRAIN_CHECK_S):
            if sampler.filling():
                self.collect(side)

    def _stop_drainer(self, side: str) -> None:
        drainer = self._drainers.pop(side, None)
        if drainer is not None:
            drainer[1].set()
            drainer[0].join()

    def collect(self, side: str) -> None:
        """Empty the rings after each call, so that no call's samples crowd out another's."""
        if side in self.samplers:
            with self._lock:
                self.pending.setdefault(side, []).extend(self.samplers[side].drain())

    def end(self, side: str, spans: list, pids: list[int], host_windows: list | None = None,
            census_at: int = -1, interpreted: list | None = None) -> None:  # fmt: skip
        """The block is over: its samples by phase (``spans``, the runner's word) and by call
        (``host_windows``, the host's own [go, done] per call; ``census_at``, the call the operator
        census recorded); ``interpreted``: sorted [start, end] spans in which its runner says the CPU's
        Triton interpreter ran its kernels (the runner's word too)."""
        if side not in self.samplers:
            return
        self._stop_drainer(side)
        samples = self.pending.pop(side, []) + self.samplers[side].drain()
        self.lost[side] += self.samplers[side].lost - self.lost_before.get(side, 0)
        names = self.names[side]
        names.refresh(pids)
        names.note_mapped(self.samplers[side].mapped)
        if self.too_many_mappings(side):
            return
        starts = [s for s, _ in spans]
        phases = self.phases[side]
        phases["calls"] += len(spans)
        # Per call, its samples in each phase ("around" a call: from the end of the one before).
        per_call = {"forward": [0] * len(spans), "around": [0] * (len(spans) + 1)}
        for sample in samples:
            i = bisect.bisect_right(starts, sample.time_ns) - 1
            phase = "forward" if i >= 0 and sample.time_ns <= spans[i][1] else "around"
            phases[phase][names.locate(sample.pid, sample.ip, sample.time_ns)] += 1
            per_call[phase][i if phase == "forward" else i + 1] += 1
        for phase, counts in per_call.items():
            phases.setdefault("per_call", {}).setdefault(phase, []).extend(counts)
        if interpreted:
            starts = [start for start, _ in interpreted]
            ends = list(itertools.accumulate((end for _, end in interpreted), max))  # spans may nest or overlap
            for sample in samples:
                i = bisect.bisect_right(starts, sample.time_ns) - 1
                if i >= 0 and sample.time_ns <= ends[i]:
                    phases["interpreted"][names.locate(sample.pid, sample.ip, sample.time_ns)] += 1
        # Per call by the host's clock, every sample in its window whatever the runner reported: the
        # census's call must look like the others (op_census.judge_samples).
        if host_windows:
            calls = [Counter() for _ in host_windows]
            starts = [start for start, _ in host_windows]
            for sample in samples:
                i = bisect.bisect_right(starts, sample.time_ns) - 1
                if i >= 0 and sample.time_ns <= host_windows[i][1]:
                    calls[i][names.locate(sample.pid, sample.ip, sample.time_ns)] += 1
            if 0 <= census_at < len(calls):
                phases.setdefault("censused", []).append(len(phases.get("host_calls", [])) + census_at)
            phases.setdefault("host_calls", []).extend(calls)

    def too_many_mappings(self, side: str) -> bool:
        """Whether the side made more mappings over code than can be followed, or more of any kind than
        were kept (MAX_CODE_MAPPINGS, MAX_MAPPINGS_KEPT)."""
        if side not in self.samplers:
            return False
        return len(self.names[side].over_code) > MAX_CODE_MAPPINGS or self.samplers[side].mapped_beyond > 0

    def close(self) -> None:
        for side in list(self._drainers):
            self._stop_drainer(side)
        for sampler in self.samplers.values():
            sampler.close()
