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
import fcntl
import functools
import mmap
import os
import struct
from collections import Counter
from dataclasses import dataclass

import numpy as np

from forge_sandbox import host

# Each sample costs the sampled thread about 10 us of CPU time (measured on a 2-core VM: +39% CPU time
# at one sample per 50 us, +20% per 100 us, +12% per 200 us). Both runners pay it alike, so speedups
# keep, but a CPU figure is that much slower than unsampled; on CUDA nothing is sampled.
MIN_PERIOD_NS = 100_000  # at most one sample per 100 us of a thread's CPU time
SAMPLES_PER_CALL = 200  # the period is chosen for about this many per call (period_for)
RING_PAGES = 64  # per CPU and runner: 8192 samples, some 40 calls' worth; drained after every call

_SYSCALL_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(os.uname().machine)
_PERF_TYPE_SOFTWARE, _PERF_COUNT_SW_TASK_CLOCK = 1, 1
_SAMPLE_IP, _SAMPLE_TID, _SAMPLE_TIME = 1, 2, 4
_INHERIT, _EXCLUDE_KERNEL, _EXCLUDE_HV, _USE_CLOCKID = 1 << 1, 1 << 5, 1 << 6, 1 << 25
_CLOCK_MONOTONIC = 1  # time.monotonic_ns() and time.perf_counter_ns() on Linux
_FLAG_FD_CLOEXEC = 8
_IOC_SET_OUTPUT = 0x2405
_RECORD_SAMPLE, _RECORD_LOST = 9, 2
_PAGE = mmap.PAGESIZE

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Sample:
    time_ns: int  # CLOCK_MONOTONIC
    pid: int  # as the host sees it
    tid: int
    ip: int


def period_for(call_ms: float) -> int:
    """The sampling period (ns of CPU time) for calls of about ``call_ms``: ~SAMPLES_PER_CALL each, so
    that a ring buffer holds many calls' samples however long a call takes."""
    return max(MIN_PERIOD_NS, int(call_ms * 1e6 / SAMPLES_PER_CALL))


def _attributes(period_ns: int) -> ctypes.Array:
    attr = bytearray(112)
    flags = _INHERIT | _EXCLUDE_KERNEL | _EXCLUDE_HV | _USE_CLOCKID
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

    def _read(self, position: int, n: int) -> bytes:
        start = position % self.size
        first = min(n, self.size - start)
        data = self.map[self.offset + start : self.offset + start + first]
        return data + self.map[self.offset : self.offset + n - first] if first < n else data

    def drain(self, into: list[Sample]) -> int:
        """Append every sample written since the last drain; return how many were lost."""
        head, tail = struct.unpack_from("QQ", self.map, 1024)
        lost = 0
        while tail < head:
            kind, _misc, size = struct.unpack("IHH", self._read(tail, 8))
            if size < 8:
                break  # a corrupt record: nothing after it can be trusted to line up
            if kind == _RECORD_SAMPLE and size >= 32:
                ip, pid, tid, when = struct.unpack("QIIQ", self._read(tail + 8, 24))
                into.append(Sample(when, pid, tid, ip))
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
        self.lost = 0

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
                    except OSError:
                        break  # the thread is gone
                    self.fds.append(fd)
                    ring = self.rings.get(cpu)
                    if ring is None:  # OSError when the kernel refuses the pages (perf_event_mlock_kb)
                        self.rings[cpu] = _Ring(fd)
                    else:
                        fcntl.ioctl(fd, _IOC_SET_OUTPUT, ring.fd)
                self.attached.add(tid)

    def drain(self) -> list[Sample]:
        """Every sample since the last drain, in time order."""
        samples: list[Sample] = []
        for ring in self.rings.values():
            self.lost += ring.drain(samples)
        samples.sort(key=lambda s: s.time_ns)
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

    def __init__(self, path: str) -> None:
        self.starts = np.zeros(0, dtype=np.uint64)
        self.ends = np.zeros(0, dtype=np.uint64)
        self.name_offsets = np.zeros(0, dtype=np.uint32)
        self.segments: list[tuple[int, int, int]] = []  # (file offset, file size, virtual address)
        self.path = path
        self.strtab: tuple[int, int] = (0, 0)
        try:
            with _open_mapped_file(path) as f:
                self._parse(f)
        except (OSError, ValueError, struct.error):
            pass  # not an ELF file we can read: its samples keep the file's name only

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
        if chosen[5] > MAX_SYMBOL_BYTES:
            raise ValueError("a symbol table too large to be a real one")
        symbols = np.fromfile(f, dtype=np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"),
                                                  ("shndx", "<u2"), ("value", "<u8"), ("size", "<u8")]),
                              count=chosen[5] // 24, offset=chosen[4] - f.tell())  # fmt: skip
        functions = symbols[((symbols["info"] & 0xF) == 2) & (symbols["value"] != 0)]
        order = np.argsort(functions["value"], kind="stable")
        functions = functions[order]
        self.starts = functions["value"]
        self.ends = functions["value"] + np.maximum(functions["size"], 1)
        self.name_offsets = functions["name"]

    @functools.cached_property
    def original(self) -> str:
        """The file name of the installed library this file is a copy of, or '' (KnownLibraries)."""
        return _known_libraries().original(self.path)

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


def _open_mapped_file(path: str):
    """A file the candidate's process maps, opened for reading as only a plain file: the candidate
    may have put a FIFO or a device in its place (opening a FIFO would block the host for good)."""
    try:
        return os.fdopen(host.open_regular_file(path), "rb")
    except host.UnsafeFile as exc:
        raise OSError(str(exc)) from None


_ELF_CACHE: dict[tuple, _ElfFunctions] = {}


def _elf(path: str) -> _ElfFunctions | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _ELF_CACHE:
        _ELF_CACHE[key] = _ElfFunctions(path)
    return _ELF_CACHE[key]


# -- libraries under another name ------------------------------------------------------------------
#
# The rules name PyTorch's and numpy's libraries by file name (op_census.sample_kind, NUMERIC_LIBRARIES),
# and a copy of OpenBLAS renamed libmine.so, called through ctypes, would read as the candidate's own
# code. So a mapped file whose name is not a known library's is compared, by size and then by content,
# with the shared objects that torch, numpy and scipy install; a copy is named for its original.
# A copy altered in its first or last 64 KiB (one byte of its build-id note will do) is not recognized:
# open, like building a library's sources into one's own extension, which no outside view tells from
# the candidate's own kernel.

_LIBRARY_PACKAGES = ("torch", "numpy", "scipy")
_FINGERPRINT_BYTES = 1 << 16


def _installed_libraries() -> dict[int, list[str]]:
    """The shared objects of the packages in _LIBRARY_PACKAGES (and their bundled ``<pkg>.libs``), by size."""
    import importlib.util

    by_size: dict[int, list[str]] = {}
    for package in _LIBRARY_PACKAGES:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            for folder in (root, f"{root.rstrip('/')}.libs"):
                for dirpath, _dirs, files in os.walk(folder):
                    for name in files:
                        if ".so" in name:
                            path = os.path.join(dirpath, name)
                            try:
                                by_size.setdefault(os.stat(path).st_size, []).append(path)
                            except OSError:
                                continue
    return by_size


def _fingerprint(path: str) -> bytes | None:
    """The file's first and last 64 KiB, or None when it cannot be read as a plain file."""
    try:
        with _open_mapped_file(path) as f:
            head = f.read(_FINGERPRINT_BYTES)
            f.seek(max(0, os.fstat(f.fileno()).st_size - _FINGERPRINT_BYTES))
            return head + f.read(_FINGERPRINT_BYTES)
    except OSError:
        return None


class KnownLibraries:
    """Tells a renamed copy of an installed library by its content."""

    def __init__(self) -> None:
        self.by_size = _installed_libraries()

    def original(self, path: str) -> str:
        """The file name of the installed library that ``path`` is a copy of, or ''."""
        try:
            same_size = self.by_size.get(os.stat(path).st_size, [])
        except OSError:
            return ""
        mine = _fingerprint(path) if same_size else None
        if mine is None:
            return ""
        return next((os.path.basename(p) for p in same_size if _fingerprint(p) == mine), "")


@functools.cache
def _known_libraries() -> KnownLibraries:
    return KnownLibraries()


# Executable memory mapped from no file: code generated at run time (oneDNN's and MKL's JIT kernels).
ANONYMOUS_CODE = "[anonymous]"


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    offset: int
    path: str  # '' for anonymous memory


def read_maps(pid: int) -> list[Mapping]:
    """The executable mappings of a process, by start address ([] when it is gone)."""
    out = []
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                fields = line.split(None, 5)
                if len(fields) < 5 or "x" not in fields[1]:
                    continue
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                path = fields[5].strip() if len(fields) > 5 else ""
                out.append(Mapping(lo, hi, int(fields[2], 16), path))
    except OSError:
        return []
    return sorted(out, key=lambda m: m.start)


class FunctionNames:
    """Instruction pointers of the processes of one runner to (shared object, function)."""

    def __init__(self) -> None:
        self.maps: dict[int, list[Mapping]] = {}
        self.starts: dict[int, list[int]] = {}
        self.memo: dict[tuple[int, int], tuple[str, str]] = {}

    def refresh(self, pids) -> None:
        """Re-read the memory maps (after a block: what it loaded is mapped by then)."""
        for pid in pids:
            maps = read_maps(pid)
            if maps:
                self.maps[pid], self.starts[pid] = maps, [m.start for m in maps]
        self.memo.clear()

    def locate(self, pid: int, ip: int) -> tuple[str, str]:
        key = (pid, ip)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._locate(pid, ip)
        return found

    def _locate(self, pid: int, ip: int) -> tuple[str, str]:
        maps = self.maps.get(pid)
        if not maps:
            return "?", ""
        i = bisect.bisect_right(self.starts[pid], ip) - 1
        if i < 0 or ip >= maps[i].end:
            return "?", ""
        m = maps[i]
        if not m.path or m.path.startswith("["):
            return m.path or ANONYMOUS_CODE, ""
        path = m.path.replace(" (deleted)", "")
        library = os.path.basename(path)
        # The file as the process sees it: an isolated candidate's /tmp is a tmpfs of its own.
        elf = _elf(f"/proc/{pid}/root{path}") or _elf(path)
        if elf is None:
            return library, ""
        library = elf.original or library
        vaddr = elf.virtual_address(ip - m.start + m.offset)
        return library, elf.function_at(vaddr) if vaddr is not None else ""


def tally(samples: list[Sample], names: FunctionNames) -> Counter:
    """Samples per (shared object, function)."""
    return Counter(names.locate(s.pid, s.ip) for s in samples)


class Profiles:
    """Both runners sampled while they are timed: per side, samples per phase and function.

    A phase is "forward" for a sample inside one of the call spans the runner reported
    (timing.time_calls), "around" otherwise (staging, checksum, between calls). Each side's
    record also keeps, per phase, how many samples each call had ("per_call")."""

    def __init__(self, period_ns: int = MIN_PERIOD_NS) -> None:
        self.period_ns = period_ns
        self.samplers: dict[str, Sampler] = {}
        self.names: dict[str, FunctionNames] = {}
        self.phases: dict[str, dict[str, Counter]] = {}
        self.pending: dict[str, list[Sample]] = {}
        # Per side, the samples the kernel could not write during its blocks (a ring was full): what
        # they saw is unknown.
        self.lost: Counter = Counter()
        self.lost_before: dict[str, int] = {}

    def attach(self, side: str, pids: list[int]) -> None:
        """Once per runner, while none of its threads can start another (the candidate is stopped)."""
        sampler = self.samplers.setdefault(side, Sampler(self.period_ns))
        sampler.attach(pids)
        self.names.setdefault(side, FunctionNames())
        self.phases.setdefault(side, {"forward": Counter(), "around": Counter(), "calls": 0})

    def begin(self, side: str) -> None:
        if side in self.samplers:
            self.samplers[side].drain()  # what came before the block (and what got lost then) is not its
            self.pending[side] = []
            self.lost_before[side] = self.samplers[side].lost

    def collect(self, side: str) -> None:
        """Empty the rings after each call, so that no call's samples crowd out another's."""
        if side in self.samplers:
            self.pending[side] += self.samplers[side].drain()

    def end(self, side: str, spans: list, pids: list[int]) -> None:
        if side not in self.samplers:
            return
        samples = self.pending.pop(side, []) + self.samplers[side].drain()
        self.lost[side] += self.samplers[side].lost - self.lost_before.get(side, 0)
        names = self.names[side]
        names.refresh(pids)
        starts = [s for s, _ in spans]
        phases = self.phases[side]
        phases["calls"] += len(spans)
        # Per call, its samples in each phase ("around" a call: from the end of the one before).
        per_call = {"forward": [0] * len(spans), "around": [0] * (len(spans) + 1)}
        for sample in samples:
            i = bisect.bisect_right(starts, sample.time_ns) - 1
            phase = "forward" if i >= 0 and sample.time_ns <= spans[i][1] else "around"
            phases[phase][names.locate(sample.pid, sample.ip)] += 1
            per_call[phase][i if phase == "forward" else i + 1] += 1
        for phase, counts in per_call.items():
            phases.setdefault("per_call", {}).setdefault(phase, []).extend(counts)

    def close(self) -> None:
        for sampler in self.samplers.values():
            sampler.close()
