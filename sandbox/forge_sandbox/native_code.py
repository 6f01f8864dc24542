"""The candidate's native code as it was built: what its shared objects call in other libraries, and
the C++/CUDA sources they were built from, read by the host from outside its process.

The static check reads C++ as the candidate's strings hold it. A candidate can put its source
together at run time (decoded from base64, joined from pieces, written to a file) and paste a name
in ways no reading of its text follows. What runs is what was built: so once the candidate has
loaded, and again after its calls, the host lists the executable files its processes map that no
installed package or the system provides (:func:`own_objects`), reads each one's dynamic symbols
(what it imports from other libraries, and the functions it defines) and the sources beside it
(where ``torch.utils.cpp_extension`` built it), and holds them to the static check's rules for
native code (:func:`findings`):

* an import of a function a kernel has no use for: loading libraries, reprotecting memory, starting
  threads or processes, raw system calls, running Python (:data:`FORBIDDEN_IMPORTS`);
* an import below PyTorch's dispatcher (``at::native``, ``at::cpu``, ``redispatch``) or from code
  PyTorch's libraries carry besides their own (NNPACK, MKL, SLEEF: :func:`_foreign`): PyTorch's work;
* a definition of ``at::native`` code: PyTorch's kernels compiled in from its headers;
* the sources, as the static check reads a string of C++ (static_check.native_red_flags).

A speed bump like the static check, and tested with it: native code can find a function without
importing it, and hide what it defines (hidden visibility, a stripped object). It is what the build
shows, though, whatever the Python source said.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import struct
import sys

from forge_sandbox import host
from forge_sandbox.cpu_samples import Mapping, read_maps

# What a kernel's native code never needs, by the name it imports (the C runtime's, Python's).
FORBIDDEN_IMPORTS = {
    **{name: "loads shared libraries or looks up their functions at run time"
       for name in ("dlopen", "dlmopen", "dlsym", "dlvsym", "dl_iterate_phdr")},
    **{name: "changes the protection or mapping of the process's memory (patching loaded code)"
       for name in ("mprotect", "pkey_mprotect", "mremap", "remap_file_pages")},
    **{name: "starts threads or processes: work outside the timed call is not allowed"
       for name in ("pthread_create", "thrd_create", "fork", "vfork", "clone", "clone3", "execve", "execv",
                    "execvp", "execvpe", "execl", "execlp", "execle", "fexecve", "system", "popen",
                    "posix_spawn", "posix_spawnp")},
    **{name: "reaches other processes, namespaces or what the process lets its owner see"
       for name in ("prctl", "ptrace", "process_vm_readv", "process_vm_writev", "unshare", "setns", "kill",
                    "tgkill", "tkill", "personality", "syscall")},
    # a thread made for a timer's or a message queue's notice (SIGEV_THREAD; a fresh review, 2026-11-27)
    **{name: "starts threads or processes: work outside the timed call is not allowed"
       for name in ("timer_create", "mq_notify")},
    # What static_check's rules on the Python side keep from a kernel (a fresh review, 2026-11-27: getuid
    # called from C++ made a GELU right only as forge's runner), and the files around it: an honest
    # kernel's extension imports none of these.
    **{name: "reads which process, user or machine it is, how it was started or what lies around it (no "
             "kernel's business: it must behave the same in every process)"
       for name in ("getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "getpid",
                    "getppid", "gettid", "getpgrp", "getpgid", "getsid", "getlogin", "getlogin_r", "cuserid",
                    "gethostname", "getdomainname", "uname", "getpwuid", "getpwuid_r", "getpwnam", "getpwnam_r",
                    "getrlimit", "getrlimit64", "prlimit", "prlimit64", "getrusage", "sysinfo", "getauxval",
                    "getenv", "secure_getenv", "getcwd", "get_current_dir_name", "getwd", "statvfs", "statvfs64",
                    "fstatvfs", "fstatvfs64", "statfs", "statfs64", "fstatfs", "fstatfs64", "stat", "stat64",
                    "lstat", "lstat64", "fstat", "fstat64", "fstatat", "fstatat64", "statx", "__xstat",
                    "__lxstat", "__fxstat", "__xstat64", "__lxstat64", "__fxstat64", "__fxstatat", "open",
                    "open64", "openat", "openat64", "fopen", "fopen64", "opendir", "fdopendir", "readlink",
                    "readlinkat", "access", "faccessat")},
    # A review, 2026-12-04 (static check on): the environment read from its C-level table (a data import,
    # ``extern char **environ``) told the exported module from forge's runner, and C++ streams wrote the user's
    # ~/.bashrc at the library's load: neither a function above nor one of the C library's by name.
    **{name: "reads or changes the process's environment from native code (no kernel's business: it must "
             "behave the same in every process, and leave the environment as it found it)"
       for name in ("environ", "__environ", "_environ", "setenv", "putenv", "unsetenv", "clearenv")},
    **{name: "makes, removes or changes files or folders from native code (a kernel reads its inputs and "
             "writes its outputs, never a file of the machine's)"
       for name in ("creat", "creat64", "freopen", "freopen64", "unlink", "unlinkat", "rename", "renameat",
                    "renameat2", "remove", "mkdir", "mkdirat", "rmdir", "chmod", "fchmod", "fchmodat", "chown",
                    "fchown", "lchown", "fchownat", "truncate", "truncate64", "symlink", "symlinkat", "link",
                    "linkat", "mkfifo", "mkfifoat", "mknod", "mknodat", "utime", "utimes", "utimensat",
                    "futimens", "chdir", "fchdir", "chroot", "scandir", "scandir64", "glob", "glob64", "nftw",
                    "nftw64", "ftw", "ftw64", "realpath", "name_to_handle_at", "open_by_handle_at",
                    "inotify_init", "inotify_init1", "fanotify_init")},
}  # fmt: skip
# C++'s own ways to files, by a mark in the mangled names they import from the C++ runtime, whose namespace
# (std) is every extension's: file streams and their buffers, std::filesystem.
_FILE_MARKS = ("basic_ofstream", "basic_ifstream", "basic_fstream", "basic_filebuf", "__basic_file",
               "St10filesystem")  # fmt: skip
# Python's C API that runs or imports Python, or reaches the interpreter's state (pybind11's own
# imports, the rest of the API, are every extension's).
_PYTHON_RUNNING = ("PyRun_", "PyImport_", "Py_CompileString", "PyEval_EvalCode", "PyEval_SetTrace",
                   "PyEval_SetProfile", "PySys_", "PyEval_GetGlobals", "PyEval_GetLocals", "PyEval_GetFrame")  # fmt: skip
# Mangled names below PyTorch's dispatcher, or its kernels: (mark, why).
_BELOW_THE_DISPATCHER = (
    ("N2at6native", "calls ATen's native kernels (PyTorch's work, hidden from forge's census)"),
    ("N2at3cpu", "calls ATen's CPU kernels (PyTorch's work, hidden from forge's census)"),
    ("redispatch", "redispatches ATen operators (PyTorch's work, hidden from forge's census)"),
    ("St6thread15_M_start_thread", "starts native threads: work outside the timed call is not allowed"),
)
# The namespaces of mangled names an extension imports from the C++ runtime, PyTorch and pybind11.
_OWN_NAMESPACES = frozenset("std __gnu_cxx __cxxabiv1 c10 at torch caffe2 pybind11".split())
# Unmangled imports from the CUDA stack (runtime, driver, NVRTC and the libraries PyTorch links).
_CUDA_PREFIXES = ("cuda", "cu", "__cuda", "__nv", "nvrtc", "nvtx", "cublas", "cudnn", "curand", "cusparse",
                  "cufft", "cusolver", "nccl", "nvjitlink")  # fmt: skip
# The C and C++ runtimes: a name they export is theirs (but FORBIDDEN_IMPORTS).
_RUNTIME_LIBRARIES = ("libc.", "libc-", "libm.", "libm-", "libstdc++", "libgcc_s", "libpthread", "libdl.", "librt.",
                      "ld-linux", "libgomp", "libatomic", "libquadmath", "libutil.")  # fmt: skip
# Where torch.utils.cpp_extension writes the sources it builds; read beside the object it built.
_SOURCE_SUFFIXES = (".cpp", ".cu", ".cc", ".cxx", ".c", ".h", ".hpp", ".cuh")
MAX_SOURCES = 32
MAX_SOURCE_BYTES = 1 << 20
MAX_SYMBOL_BYTES = 16 << 20  # an extension's dynamic symbol table is kilobytes
# Triton's generated launchers (its own C source, built in the candidate's Triton cache): they load
# the CUDA driver with dlopen. Passed over by name, in that cache only, where no cpp_extension build
# lies beside them.
_TRITON_MODULES = ("__triton_launcher", "cuda_utils")
_SHT_DYNSYM = 11


def own_objects(pids: list[int], trusted_folders: list[str], caches: list[str] = ()) -> dict[str, str]:
    """The executable files the processes map that lie outside ``trusted_folders`` (installed packages,
    the interpreter, the system's libraries) or in the candidate's own ``caches``, wherever those are:
    {path as they see it: path the host opens}. Triton's generated modules in its cache are left out
    (_TRITON_MODULES)."""
    found: dict[str, str] = {}
    for pid in pids:
        for m in read_maps(pid):
            path = m.path.removesuffix(" (deleted)")
            if not m.executable or not path.startswith("/") or path in found:
                continue
            if _triton_module(path, caches):
                continue
            if _within(path, trusted_folders) and not _within(path, caches) and _same_file(m, path):
                continue
            found[path] = _readable(pid, m, path)
    return found


def _within(path: str, folders) -> bool:
    return any(folder and path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _same_file(m: Mapping, path: str) -> bool:
    """Whether the mapped file is the host's own file at that path (by device and inode)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == m.file


def _triton_module(path: str, caches) -> bool:
    folder, name = os.path.split(path)
    return (_within(path, caches) and name.split(".")[0] in _TRITON_MODULES
            and not os.path.exists(os.path.join(folder, "build.ninja")))  # fmt: skip


def _readable(pid: int, m: Mapping, path: str) -> str:
    """Where the host reads a mapped file: through the process's own root (its mount namespace), or,
    for a file deleted or of no name (memfd), through the mapping itself."""
    if m.path.endswith(" (deleted)") or path.startswith("/memfd:"):
        return f"/proc/{pid}/map_files/{m.start:x}-{m.end:x}"
    return f"/proc/{pid}/root{path}"


def trusted_folders() -> list[str]:
    """Where installed code lies: the interpreter's prefixes, the package folders, the system's libraries
    and programs."""
    from forge_sandbox.cpu_samples import _SYSTEM_LIBRARY_FOLDERS, _package_roots

    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    programs = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")  # forge's namespace starter among them
    return sorted({*prefixes, *_package_roots(), *_SYSTEM_LIBRARY_FOLDERS, *programs, "/usr/local/cuda", "/opt"})


def symbols(path: str) -> tuple[list[str], list[str]]:
    """(imported names, defined names) of an ELF file's dynamic symbol table; ([], []) when it has none
    or cannot be read (a file the candidate shaped to mislead a parser: it says nothing, as it runs
    nothing a loader would load)."""
    try:
        with os.fdopen(_open_object(path), "rb") as f:
            return _dynamic_symbols(f)
    except (OSError, host.UnsafeFile, ValueError, struct.error):
        return [], []


def _open_object(path: str) -> int:
    """A descriptor for an object file: never a FIFO or a device. A mapping's own entry in /proc is a
    link by nature (to the file, deleted or not); any other path is opened without following one."""
    if "/map_files/" not in path:
        return host.open_regular_file(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise host.UnsafeFile("not a regular file")
    return fd


def _dynamic_symbols(f) -> tuple[list[str], list[str]]:
    header = f.read(64)
    if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff = struct.unpack_from("<Q", header, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", header, 0x3A)
    if shentsize < 64 or shnum > 4096:
        raise ValueError("unexpected section headers")
    f.seek(shoff)
    table = f.read(shentsize * shnum)
    sections = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
    dynsym = next((s for s in sections if s[1] == _SHT_DYNSYM), None)
    if dynsym is None or dynsym[6] >= len(sections):
        return [], []
    strtab = sections[dynsym[6]]
    if dynsym[5] > MAX_SYMBOL_BYTES or strtab[5] > MAX_SYMBOL_BYTES:
        raise ValueError("a symbol table larger than any extension's")
    f.seek(strtab[4])
    names = f.read(strtab[5])
    f.seek(dynsym[4])
    entries = f.read(dynsym[5])
    imported, defined = [], []
    for i in range(1, len(entries) // 24):
        name_at, _info, _other, shndx = struct.unpack_from("<IBBH", entries, i * 24)
        name = names[name_at : names.find(b"\0", name_at)].decode("utf-8", "replace") if name_at < len(names) else ""
        if name:
            (imported if shndx == 0 else defined).append(name)
    return imported, defined


def sources_beside(path: str) -> dict[str, str]:
    """The C/C++/CUDA sources in the folder an object lies in (where cpp_extension built it), bounded."""
    folder = os.path.dirname(path)
    out: dict[str, str] = {}
    if "/map_files/" in path:  # a deleted file's folder is not where it was built
        return out
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        if len(out) >= MAX_SOURCES or not name.endswith(_SOURCE_SUFFIXES):
            continue
        try:
            with os.fdopen(host.open_regular_file(os.path.join(folder, name)), "rb") as f:
                out[name] = f.read(MAX_SOURCE_BYTES).decode("utf-8", "replace")
        except (OSError, host.UnsafeFile):
            continue
    return out


@functools.cache
def _runtime_exports() -> frozenset[str]:
    """The names the C and C++ runtime libraries this interpreter has loaded export."""
    names: set[str] = set()
    for m in read_maps(os.getpid()):
        if m.path.startswith("/") and os.path.basename(m.path).startswith(_RUNTIME_LIBRARIES):
            names.update(symbols(m.path)[1])
    return frozenset(names)


def _bare(name: str) -> str:
    return name.split("@", 1)[0]


def _foreign(name: str) -> bool:
    """Whether an import comes from neither the C/C++ runtime, Python, the CUDA stack, nor PyTorch's
    own namespaces: code a library carries (NNPACK's nnp_*, MKL's, SLEEF's, fbgemm::, a BLAS's)."""
    if name.startswith("_Z"):
        return _top_namespace(name) not in _OWN_NAMESPACES | {""}
    if name.startswith(("Py", "_Py")) or name.startswith(_CUDA_PREFIXES):
        return False
    return name not in _runtime_exports() and not name.startswith(("_ITM_", "__gmon_start__", "_Jv_"))


_MANGLED_PREFIX = re.compile(r"_Z(?:T[hv]n?\d+_(?:n?\d+_)?|T[VISTH]|GV|Th)?Z*L?N?[rVKRO]*")
_STD = ("St", "Sa", "Sb", "Ss", "Si", "So", "Sd")


def _top_namespace(name: str) -> str:
    """The first name a mangled symbol is nested in (``at`` for at::native::x), ``std`` for the
    standard library's abbreviations, and ``""`` for the runtime's operators (new, delete)."""
    rest = name[_MANGLED_PREFIX.match(name).end() :]
    if rest.startswith(_STD):
        return "std"
    length = re.match(r"\d+", rest)
    if length is None:
        return ""  # an operator (_Znwm) or a substitution: the C++ runtime's
    return rest[length.end() : length.end() + int(length.group())]


def import_findings(imported: list[str], defined: list[str]) -> list[str]:
    """Why an object's imports and definitions break the rules for native code (module doc)."""
    out: list[str] = []
    for raw in imported:
        name = _bare(raw)
        why = FORBIDDEN_IMPORTS.get(name)
        if why is None and name.startswith(_PYTHON_RUNNING):
            why = "runs Python or reaches the interpreter's state from native code"
        if why is None and name.startswith("_Z"):
            why = next((w for mark, w in _BELOW_THE_DISPATCHER if mark in name), None)
        if why is None and name.startswith("_Z") and any(mark in name for mark in _FILE_MARKS):
            why = "reads or writes files from native code (C++ file streams, std::filesystem)"
        if why is None and _foreign(name):
            why = "calls code that PyTorch's libraries or another library carry, not its own (PyTorch's work)"
        if why is not None:
            out.append(f"{why} (imports {name[:80]})")
    for name in defined:
        if "N2at6native" in name:
            out.append(f"holds ATen's native kernels, compiled in from PyTorch's headers (defines {name[:80]})")
            break
    return out


def findings(pids: list[int], trusted: list[str], caches: list[str] = ()) -> list[str]:
    """Every rule the candidate's own native code breaks, as built and as its sources beside it read
    (static_check.native_red_flags), each once, naming the file."""
    from forge_sandbox.static_check import native_red_flags

    out: list[str] = []
    for path, readable in own_objects(pids, trusted, caches).items():
        name = os.path.basename(path)
        problems = [f"as built, {problem}" for problem in import_findings(*symbols(readable))]
        for source_name, text in sources_beside(readable).items():
            problems += [f"built from {source_name}, {why} ({marker})" for marker, why in native_red_flags(text)]
        out += [f"its native code {name}, {problem}" for problem in dict.fromkeys(problems)]
    return out
