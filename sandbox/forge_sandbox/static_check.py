"""Static checks on a candidate's source, before any of it runs.

These are speed bumps, not the wall: the verdict's real defenses live outside
the candidate's process (see evaluate.py). They exist because they are cheap,
they give the coder agent a precise reason, and a legitimate kernel never needs
any of the constructs flagged here.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field

from . import build_flags, cpp_expansion

# Modules whose attributes a candidate must never reassign.
_PROTECTED_ROOTS = {"torch", "time", "triton", "cupy", "numpy", "np", "builtins", "forge_sandbox", "gc", "os", "sys"}
_THREAD_MODULES = {"threading", "_thread", "concurrent", "multiprocessing", "asyncio", "subprocess", "signal", "pty"}
_INTROSPECTION_MODULES = {"gc", "inspect", "ctypes", "traceback", "faulthandler"}
# Modules that reach other modules by a name computed at run time (an import by string, a pickle's
# global, a patch target): what they reach is out of this check's sight.
_IMPORT_MACHINERY = {"importlib", "pkgutil", "runpy", "zipimport", "imp", "_imp", "pydoc", "pickle", "_pickle",
                     "copyreg", "marshal", "shelve", "unittest", "dill", "cloudpickle"}  # fmt: skip
_NETWORK_MODULES = {"socket", "ssl", "urllib", "urllib3", "http", "requests", "httpx", "ftplib", "smtplib", "aiohttp"}
_INTROSPECTION_CALLS = {"sys._getframe", "sys.settrace", "sys.setprofile", "gc.get_objects", "gc.get_referrers"}
# What hands out the interpreter's frames (the caller's, and so forge's runner below it), by the
# function's own name under the modules that have one (red team, 2026-11-26: logging.currentframe)
_FRAME_GETTERS = frozenset("currentframe _getframe _current_frames stack trace getouterframes getinnerframes "
                           "walk_stack walk_tb".split())  # fmt: skip
_FRAME_MODULES = frozenset({"sys", "inspect", "logging", "traceback", "threading"})
# os functions that start, signal or detach processes
_PROCESS_CALLS = {
    "fork",
    "forkpty",
    "system",
    "popen",
    "kill",
    "killpg",
    "setsid",
    "setpgid",
    "spawnl",
    "spawnv",
    "spawnlp",
    "spawnvp",
    "execv",
    "execve",
    "execl",
    "execlp",
    "execvp",
    "posix_spawn",
    "posix_spawnp",
}
_STREAM_CALLS = {
    "torch.cuda.Stream",
    "torch.cuda.stream",
    "torch.cuda.StreamContext",
    "torch.Stream",
    "cupy.cuda.Stream",
    "cp.cuda.Stream",
}
_PRIVATE_PATHS = ("/proc", "/dev/shm", "forge-eval", "kev-")  # "/proc" bare too: os.listdir("/proc")
# How its process was started, and which process, user and machine it is: a kernel that reads them
# can be right where it is evaluated and wrong in a user's model (a fresh review, 2026-11-26: a GELU
# right only where it ran as PID 2 under the overflow uid, as forge's runner does, passed).
_HOW_IT_WAS_STARTED = {
    "sys.argv", "sys.orig_argv", "os.getppid", "os.getpid", "os.getuid", "os.geteuid", "os.getgid", "os.getegid",
    "os.getresuid", "os.getresgid", "os.getgroups", "os.getpgrp", "os.getpgid", "os.getsid", "os.getlogin",
    "os.uname", "os.ctermid", "os.ttyname", "os.isatty", "platform.node", "platform.uname", "socket.gethostname",
    "getpass.getuser", "pwd.getpwuid", "threading.get_native_id", "resource.getrlimit", "resource.getrusage",
    # and where it runs (a fresh review, 2026-11-27: right only where sys.flags.safe_path was set, as forge
    # starts its runner, or where "/" belonged to the overflow uid): its directory, the files around it
    "sys.flags", "sys.executable", "os.getcwd", "os.getcwdb", "pathlib.Path.cwd", "pathlib.Path.home",
    "pathlib.Path.owner", "pathlib.Path.group", "os.stat", "os.lstat", "os.fstat", "os.statvfs", "os.fstatvfs",
    "shutil.disk_usage", "os.listdir", "os.scandir", "os.walk", "os.getloadavg",
    # which files exist there, and how many processors it may use (a review, 2026-11-29: the exported
    # module's own cache folder exists only in a user's process): probes as good as a listing
    "os.path.exists", "os.path.lexists", "os.path.isfile", "os.path.isdir", "os.path.islink", "os.path.ismount",
    "os.path.getsize", "os.path.getmtime", "os.path.getatime", "os.path.getctime", "os.access",
    "os.path.expanduser", "os.path.expandvars", "glob.glob", "glob.iglob", "tempfile.gettempdir",
    "tempfile.gettempdirb", "os.cpu_count", "os.process_cpu_count", "os.sched_getaffinity",
}  # fmt: skip
_STARTED_WHY = (
    "how its process was started, which process, user or machine it is and what lies around it are no kernel's "
    "business (it must behave the same in every process)"
)
# How a tensor was made and who else holds it: forge's calls pass inputs held by one list, as leaves, and
# a kernel that read this was right there and wrong on a user's ``y = m(x)`` or a training activation (a
# review, 2026-12-02: sys.getrefcount and grad_fn). A kernel computes from values, never from a history.
_PROVENANCE = frozenset({"getrefcount", "getweakrefcount", "getweakrefs", "grad_fn", "is_leaf", "_version",
                         "_base", "output_nr", "_backward_hooks"})  # fmt: skip
# A file's owner, group and device, however it was stat'ed (os.stat, pathlib, a DirEntry).
_OWNER_ATTRIBUTES = frozenset({"st_uid", "st_gid", "st_dev", "st_rdev", "st_ino"})
_SUBCLASS_HOOKS = {"__torch_function__", "__torch_dispatch__"}
# Builtins that reach attributes or namespaces by a name given at run time: held to written-out names
# where they are called (visit_Call), so called by their own names only. Bound to another name, passed or
# stored, they are read nowhere (review of 2026-11-28: `_g = getattr` reached sys._getframe and PyTorch's
# dispatch-mode stack through names built from pieces).
_REFLECTIVE_BUILTINS = {"getattr", "setattr", "delattr", "hasattr", "vars", "globals", "locals", "eval", "exec",
                        "compile", "__import__", "__builtins__"}  # fmt: skip
_REFLECTIVE_OPERATORS = {"attrgetter", "methodcaller"}
# ... and the methods behind them, on any object (object.__getattribute__, type(x).__getattribute__):
# called with names written out, or not at all.
_REFLECTIVE_METHODS = {"__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__builtins__"}
# PyTorch's compilers, dispatch hooks and profilers: they do PyTorch's work behind a token kernel, or
# tell the candidate when forge's census of PyTorch operators is watching.
_TORCH_MACHINERY = (
    "torch.compile", "torch.jit", "torch.library", "torch.fx", "torch.export", "torch.overrides", "torch.profiler",
    "torch.autograd.profiler", "torch.utils._python_dispatch", "torch.utils._pytree",
)  # fmt: skip
# Registrations that last for the whole importing process and that no kernel needs (a review, 2026-11-29:
# at import, a torch.load safe global that deletes folders, an optimizer hook that zeroes every learning
# rate, an audit hook refusing name lookups, numpy's errors raising, logging disabled, an exit handler that
# reports success); the runner reads what it can of them after every command too (process_settings), but
# an audit hook or a fork handler can never be read or removed.
_PROCESS_WIDE_REGISTRATIONS = {
    "sys.addaudithook", "atexit.register", "os.register_at_fork", "torch.serialization.add_safe_globals",
    "torch.optim.optimizer.register_optimizer_step_pre_hook", "torch.optim.optimizer.register_optimizer_step_post_hook",
    "logging.disable", "numpy.seterr", "numpy.seterrcall", "torch.set_warn_always", "torch.seed", "torch.random.seed",
    "torch.cuda.seed", "torch.cuda.seed_all",
    # the global random generators seeded or set (a review, 2026-12-01: torch's seeded at import, Python's and
    # numpy's in every forward: a user's augmentation and shuffling repeated after each call), torch.load's
    # deserializers, torch.hub's folder (a planted hubconf.py ran for a trusted repository), the temporary
    # folder, the network's defaults, the locale and decimal arithmetic
    "torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
    "torch.set_rng_state", "torch.random.set_rng_state", "torch.cuda.set_rng_state", "torch.cuda.set_rng_state_all",
    "random.seed", "random.setstate", "numpy.random.seed", "numpy.random.set_state",
    "torch.serialization.register_package", "torch.hub.set_dir", "socket.setdefaulttimeout",
    "urllib.request.install_opener", "locale.setlocale", "decimal.setcontext",
    # (and every imported module's register*: visit_Call)
    "torch.utils.checkpoint.set_device_type", "cupy.cuda.set_allocator", "cupy.cuda.set_pinned_memory_allocator",
    "mimetypes.add_type",
    # review 47: torch's generator seeded through its object, printing changed, warnings silenced, the C-level
    # environment that child processes inherit set behind os.environ's back
    "torch.default_generator.manual_seed", "torch.default_generator.set_state", "torch.default_generator.seed",
    "torch.set_printoptions", "numpy.set_printoptions", "warnings.filterwarnings", "warnings.simplefilter",
    "warnings.resetwarnings", "os.putenv", "os.unsetenv",
}  # fmt: skip
# The random generators' seed and state, read: a kernel right only for the seeds forge draws (or only for
# the small ones a user sets) passed (a review, 2026-11-29). A kernel draws from a generator; it never
# needs to know how it was seeded.
_SEED_READS = {"initial_seed", "get_rng_state", "get_rng_state_all", "get_state"}
# In C++/CUDA source strings: entry points that bypass PyTorch's dispatcher (and so the census), and
# native threads that would run beside the other side's timing.
_NATIVE_RED_FLAGS = {
    # ATen's namespaces below its front door, named from at::, under a using-directive of at or
    # through an alias (used as namespaces, _AFTER: `redispatch`, `_ops` and `native` name nothing
    # else a kernel uses)
    "cpu::": "calls ATen's CPU kernels directly (PyTorch's work, hidden from forge's census)",
    "redispatch": "redispatches ATen operators (PyTorch's work, hidden from forge's census)",
    "_ops": "calls ATen operators below the dispatcher's front door (hidden from forge's census)",
    "ATen/NativeFunctions.h": "includes ATen's native kernels (PyTorch's work, hidden from forge's census)",
    "ATen/CPUFunctions.h": "includes ATen's CPU kernels (PyTorch's work, hidden from forge's census)",
    "ATen/CUDAFunctions.h": "includes ATen's CUDA kernels (PyTorch's work, hidden from forge's census)",
    "ATen/native/": "includes ATen's kernel implementations (PyTorch's work compiled in, hidden from forge)",
    # at::native, called or named another way (an alias, a using-directive of at or of at::native)
    "native": "names ATen's native kernels (PyTorch's work, hidden from forge's census)",
    "DispatchKey": "changes which dispatch keys run (forge's operator census sits on the Python key)",
    "c10::impl::": "uses PyTorch's dispatcher internals (forge's operator census sits on the Python key)",
    "unshare(": "makes a namespace of its own (hidden from the host; the sandbox refuses it)",
    "std::thread": "starts native threads: work outside the timed call is not allowed",
    "pthread_create": "starts native threads: work outside the timed call is not allowed",
    "std::async": "starts native threads: work outside the timed call is not allowed",
    "std::jthread": "starts native threads: work outside the timed call is not allowed",
    "thrd_create": "starts native threads: work outside the timed call is not allowed",
    # Native code reaching back into the interpreter: from there it can rebind forge's own functions in
    # its process (the clock, the staging, the checksum) or PyTorch's census guards, out of this check's
    # sight. A kernel takes tensors and returns tensors; it never needs a Python module.
    "module_::import": "imports Python modules from native code (forge's and PyTorch's internals are not for kernels)",
    "module::import": "imports Python modules from native code (forge's and PyTorch's internals are not for kernels)",
    "PyImport_": "imports Python modules from native code (forge's and PyTorch's internals are not for kernels)",
    "py::globals": "reaches Python's namespaces from native code",
    "py::setattr": "rebinds Python attributes from native code",
    "PyObject_SetAttr": "rebinds Python attributes from native code",
    "PyDict_SetItem": "writes into Python namespaces from native code",
    "PySys_": "reaches the interpreter's state (sys) from native code",
    "PyEval_": "reaches the interpreter's frames and globals from native code",
    "PyThreadState_": "reaches the interpreter's frames from native code",
    "py::exec": "runs Python code from native code",
    "py::eval": "runs Python code from native code",
    "PyRun_": "runs Python code from native code",
    "forge_sandbox": "names forge's own modules (the evaluator's code is not for kernels)",
    "_DisableTorch": "switches off PyTorch's dispatch hooks (forge's operator census sits on them)",
    # Native code rewriting the process's loaded code: remapped or patched library pages make PyTorch's
    # work read as another file's in the host's samples.
    "MAP_FIXED": "maps memory over the process's existing mappings (its loaded code)",
    "mprotect": "changes the protection of the process's memory (patching loaded code)",
    "dl_iterate_phdr": "walks the process's loaded libraries",
    "prctl": "changes what the process lets its owner see or do (PR_SET_DUMPABLE hides it from the host)",
    "syscall(": "makes raw system calls",
    ".attr(": "reaches Python attributes from native code",
    "dlopen": "loads shared libraries at run time (a library's work is not the candidate's kernel)",
    "dlsym": "looks up functions of loaded libraries at run time",
    # ... and the same review's build-time probe: __has_include of a file that lies only in forge's build (the
    # host's precompiled header) chose the right constant there alone
    **{name: "probes for files as it is compiled (what lies on the machine tells one build from another; a "
             "kernel must compile the same everywhere)" for name in ("__has_include", "__has_embed")},
    "current_seed": "reads a random generator's seed (a kernel must behave the same whatever the seed)",
    "initial_seed": "reads a random generator's seed (a kernel must behave the same whatever the seed)",
    # A review, 2026-12-04: torch's CPU generator seeded from C++ in every forward of the exported module
    # (told from forge's runner by the environment, read through ``environ``), and the user's ~/.bashrc
    # written through a C++ file stream at the library's load
    **{name: "seeds or sets a random generator (every later draw of the importing process would repeat)"
       for name in ("set_current_seed", "manual_seed", "set_offset", "set_philox_offset_per_thread")},
    **{name: "reads or changes the process's environment from native code (a kernel must behave the same in "
             "every process, and leave the environment as it found it)"
       for name in ("environ", "__environ", "_environ", "setenv", "putenv", "unsetenv", "clearenv")},
    **{name: "reads or writes files from native code (a kernel reads its inputs and writes its outputs, "
             "never a file of the machine's)"
       for name in ("fstream", "ofstream", "ifstream", "filebuf", "filesystem", "fopen", "freopen")},
}  # fmt: skip
# Where a module lies, read off it: a review (2026-12-04) told forge's runner from the exported module by
# the folder its extension was built in (``_ext.__file__``), as a bare __file__ tells where the source lies.
_WHERE_IT_LIES = frozenset({"__file__", "__cached__", "__spec__", "__loader__", "__path__"})
_WHERE_IT_LIES_CALLS = frozenset({"inspect.getfile", "inspect.getsourcefile", "inspect.getabsfile",
                                  "inspect.getmodule", "importlib.util.find_spec", "pkgutil.get_loader",
                                  "importlib.resources.files"})  # fmt: skip
# Frames and what they hold: from an exception's traceback, a generator or a coroutine, the frames of
# the code that called the candidate (forge's runner: its timing, staging and checksum) are a few
# attributes away (red team round 10 rewrote the runner's per-call harness that way).
_FRAME_ATTRIBUTES = frozenset(
    "tb_frame tb_next f_back f_globals f_locals f_builtins f_code gi_frame cr_frame ag_frame".split()
    # and a function's insides: what its closure holds (forge's wrappers' counters, a fresh review of
    # 2026-11-26), its globals, its code
    + "__closure__ cell_contents __globals__ __code__ __wrapped__ __defaults__ __kwdefaults__".split()
)
_TENSOR_CLASSES = {"torch.Tensor", "Tensor", "torch._C.TensorBase", "torch._C._TensorBase"}
# (a subclass of Parameter in a GEMM made the operator census count its elements, not its multiply-adds)
_PARAMETER_CLASSES = {"torch.nn.Parameter", "nn.Parameter", "Parameter", "torch.nn.parameter.Parameter"}
# Flags an honest kernel may set: PyTorch's own backend switches, not its functions.
_BACKEND_FLAGS = ("torch.backends.",)
# Calls that remove, move or change files (a review, 2026-12-01: a kernel whose import removed a folder
# passed; in its sandbox the folder was not there). The runner records what Python's functions change at
# run time too (file_writes), whatever name they are reached by.
_FILE_CHANGES = {
    "os.mkfifo", "os.mknod",
    "os.remove", "os.unlink", "os.rmdir", "os.removedirs", "os.rename", "os.renames", "os.replace", "os.chmod",
    "os.lchmod", "os.chown", "os.lchown", "os.truncate", "os.utime", "os.link", "os.symlink", "shutil.rmtree",
    "shutil.move", "shutil.chown", "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree",
}  # fmt: skip
_BUILD_FLAG_ARGUMENTS = {"extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths"}
# What changes a container in place: called on (or stored into) one that an imported module holds, it
# changes the library for the whole importing process (a review, 2026-12-02: DataLoader's collate table
# and torch.distributions' KL registry updated at import; every batch reversed, every KL zero).
_CONTAINER_CHANGES = frozenset("update setdefault pop popitem clear append extend insert remove add discard sort "
                               "reverse __setitem__ __delitem__ __ior__ __iadd__".split())  # fmt: skip
# Files read, or probed for, from Python: what lies on the machine tells forge's sandbox from a user's
# process (the same review: a GELU exact only where pathlib found /sys/fs/cgroup empty, as the sandbox
# shows it). A kernel's code lies in its own source; it never needs a file of the machine's.
_FILE_READS = {
    "open", "builtins.open", "io.open", "io.open_code", "io.FileIO", "os.open", "os.fdopen", "codecs.open",
    "numpy.load", "numpy.fromfile", "numpy.loadtxt", "numpy.genfromtxt", "numpy.memmap", "torch.load",
    "torch.from_file", "linecache.getline", "linecache.getlines", "fileinput.input", "os.readlink",
}  # fmt: skip
# ... and the methods that do it on a path object (pathlib's), whatever the object was reached by
_FILE_METHODS = frozenset("exists is_dir is_file is_symlink is_mount is_socket is_fifo is_block_device "
                          "is_char_device is_junction iterdir glob rglob stat lstat read_text read_bytes readlink "
                          "samefile expanduser open".split())  # fmt: skip
_FILES_WHY = "what lies on the machine is no kernel's business (it must behave the same on every machine)"


@dataclass
class StaticReport:
    """What the source contains: its kernel backends and the red flags found."""

    backends: list[str] = field(default_factory=list)
    kernel_names: list[str] = field(default_factory=list)  # what its own kernels are called, for the census
    findings: list[str] = field(default_factory=list)  # each "line N: what and why"
    syntax_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.syntax_error is None and bool(self.backends) and not self.findings


def dotted_name(node: ast.AST) -> str:
    """`torch.cuda.Stream` for the AST of that expression; '' when not a plain dotted name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _decorator_is_triton_jit(dec: ast.AST) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    name = dotted_name(target)
    return name in {"triton.jit", "jit", "triton.autotune", "autotune"} or name.endswith(".jit")


def _triton_kernels(tree: ast.AST) -> list[ast.FunctionDef]:
    """The functions decorated @triton.jit (or autotune)."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
            and any(_decorator_is_triton_jit(d) for d in node.decorator_list)]  # fmt: skip


def _kernel_backends(tree: ast.AST, source: str) -> list[str]:
    found = {"triton"} if _triton_kernels(tree) else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = dotted_name(node.func)
            last = name.rsplit(".", 1)[-1]
            if last in {"load_inline", "load"} and ("cpp_extension" in name or last == "load_inline"):
                kind = "cuda" if any(kw.arg == "cuda_sources" for kw in node.keywords) else "cpp"
                found.add(kind)
            if last in {"RawKernel", "RawModule"}:
                found.add("cupy")
    # load_inline(..., cuda_sources=...) passed positionally still names CUDA source.
    if "cpp" in found and re.search(r"__global__", source):
        found.discard("cpp")
        found.add("cuda")
    return sorted(found)


def _kernel_names(tree: ast.AST, source: str) -> list[str]:
    """Triton kernel function names, CUDA __global__ function names, CuPy kernel names."""
    names = {node.name for node in _triton_kernels(tree)}
    plain = re.sub(r"__launch_bounds__\s*\([^)]*\)", " ", source)
    names.update(re.findall(r"__global__\s+\w[\w:<>]*\s+(\w+)\s*\(", plain))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and dotted_name(node.func).endswith("RawKernel") and len(node.args) >= 2:
            if isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                names.add(node.args[1].value)
    return sorted(names)


# What a Triton kernel's body may call besides triton's own: Python's builtins that Triton's compiler
# folds, and other @triton.jit functions.
_TRITON_BUILTINS = frozenset("range min max abs len int float bool print isinstance tuple zip enumerate".split())


def _triton_kernels_calling_python(tree: ast.AST, visitor: _Visitor) -> list[str]:
    """A @triton.jit body that calls a Python function or module (np.sum, torch.softmax, a helper of the
    module's): Triton compiles none of that for a GPU, and under the CPU's interpreter, where the body
    runs as Python, it is that code doing the work inside the kernel's launch (red team round 10)."""
    kernels = _triton_kernels(tree)
    jitted = {kernel.name for kernel in kernels}
    findings = []
    for kernel in kernels:
        parameters = {a.arg for a in (*kernel.args.posonlyargs, *kernel.args.args, *kernel.args.kwonlyargs)}
        local = parameters | {t.id for node in ast.walk(kernel) if isinstance(node, (ast.Assign, ast.For, ast.AugAssign,
                                                                                    ast.AnnAssign, ast.NamedExpr))
                              for t in ast.walk(getattr(node, "target", None) or node.targets[0]) if isinstance(t, ast.Name)}  # fmt: skip
        for node in ast.walk(kernel):
            if not isinstance(node, ast.Call):
                continue
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if not isinstance(root, ast.Name) or root.id in local:
                continue  # a method of a value the kernel holds (x.to(...)), or a function passed in
            name = visitor.resolved(node.func) or root.id
            if name.split(".")[0] == "triton" or (
                isinstance(node.func, ast.Name) and name in jitted | _TRITON_BUILTINS
            ):
                continue
            findings.append(f"line {node.lineno}: the Triton kernel {kernel.name} calls {name or root.id}: a kernel "
                            "body runs Triton's operations and other @triton.jit functions, not Python's")  # fmt: skip
    return findings


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of string constants that are documentation, not code: a module's, class's or function's
    first statement, and any other string standing alone as a statement."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.add(id(node.value))
    return found


class _Visitor(ast.NodeVisitor):
    def __init__(self, tree: ast.AST) -> None:
        self.findings: list[str] = []
        self.aliases: dict[str, str] = {}  # local name -> the module it stands for (import time as t)
        self.modules: set[str] = set()  # the modules imported by ``import`` (torch, torch.nn.functional)
        self.docstrings = _docstrings(tree)
        self.parents: dict[int, ast.AST] = {
            id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)
        }

    def resolved(self, node: ast.AST) -> str:
        """A dotted name with its first part's import alias resolved (`F.softmax` -> `torch.nn.functional.softmax`)."""
        name = dotted_name(node)
        first, _, rest = name.partition(".")
        if first in self.aliases:
            return self.aliases[first] + (f".{rest}" if rest else "")
        return name

    def root(self, node: ast.AST) -> str:
        """The module a dotted expression starts from, seeing through import aliases."""
        first = dotted_name(node).split(".")[0]
        return self.aliases.get(first, first).split(".")[0]

    def flag(self, node: ast.AST, message: str) -> None:
        self.findings.append(f"line {getattr(node, 'lineno', '?')}: {message}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            parts = alias.name.split(".")
            self.modules.update(".".join(parts[: i + 1]) for i in range(len(parts)))
            self.aliases[alias.asname or parts[0]] = alias.name if alias.asname else parts[0]
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._check_module(node, node.module or "")
        for alias in node.names:
            private = [p for p in f"{node.module}.{alias.name}".split(".") if _private(p)]
            if private and node.level == 0:
                self.flag(node, f"imports {node.module}.{alias.name}: a library's private internals ({private[0]}) "
                                "are not for kernels")  # fmt: skip
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            if f"{node.module}.{alias.name}".startswith(("numpy.ctypeslib", "np.ctypeslib")):
                self.flag(
                    node, "imports numpy.ctypeslib: numpy's door to native libraries (a BLAS behind forge's back)"
                )
        for alias in node.names:
            if f"{node.module}.{alias.name}" in _HOW_IT_WAS_STARTED:
                self.flag(node, f"imports {node.module}.{alias.name}: {_STARTED_WHY}")
        if node.module in {"os", "contextlib"} and any(a.name in _PROCESS_CALLS | {"suppress"} for a in node.names):
            self.flag(
                node, f"imports {', '.join(a.name for a in node.names)} from {node.module}: not allowed in a kernel"
            )
        if node.module in {"torch.cuda", "cupy.cuda"} and any(a.name in {"Stream", "stream"} for a in node.names):
            self.flag(node, "imports a CUDA stream: work on a side stream hides from the timer")
        self.generic_visit(node)

    def _check_module(self, node: ast.AST, module: str) -> None:
        root = module.split(".")[0]
        if module.startswith("torch.multiprocessing"):
            root = "multiprocessing"
        machinery = _torch_machinery(module)
        if machinery:
            self.flag(node, f"imports {module}: {machinery}")
        elif root in _IMPORT_MACHINERY or root in ("forge_sandbox", "forge"):
            self.flag(node, f"imports {module}: dynamic imports and forge's own modules are not for kernels")
        elif module.startswith("numpy.ctypeslib"):
            self.flag(node, f"imports {module}: numpy's door to native libraries (a BLAS behind forge's back)")
        elif root in _THREAD_MODULES:
            self.flag(node, f"imports {module}: threads or processes can do work outside the timed call")
        elif root in _INTROSPECTION_MODULES:
            self.flag(node, f"imports {module}: introspection of the evaluator's process is not allowed")
        elif root in _NETWORK_MODULES:
            self.flag(node, f"imports {module}: a kernel has no use for the network (answers fetched from elsewhere?)")

    def _tensor_bases(self, node: ast.AST, name: str, bases: list) -> None:
        for base in bases:
            if dotted_name(base) in _TENSOR_CLASSES:
                self.flag(node, f"class {name} subclasses torch.Tensor: outputs must be plain torch.Tensor")
            elif dotted_name(base) in _PARAMETER_CLASSES:
                self.flag(node, f"class {name} subclasses torch.nn.Parameter: weights must be plain parameters")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _SUBCLASS_HOOKS:
            # a hook bound by assignment, in a class body or anywhere (a fresh review, 2026-11-27)
            how = "assigns" if isinstance(node.ctx, ast.Store) else "uses"
            self.flag(node, f"{how} {node.id}: intercepting torch calls is not allowed")
        parent = self.parents.get(id(node))
        reflective = node.id in _REFLECTIVE_BUILTINS or self._reflective_alias(node.id)
        if reflective and isinstance(node.ctx, ast.Load) and not (isinstance(parent, ast.Call) and parent.func is node):
            self.flag(node, f"uses {node.id} other than by calling it by its name (an alias, an argument, a value "
                            "kept): what it reaches must be written out where it is called")  # fmt: skip
        if node.id == "__file__" and isinstance(node.ctx, ast.Load):
            self.flag(node, "reads __file__, where its source lies: no kernel's business (it must behave the same "
                            "wherever it is loaded from)")  # fmt: skip

    def _reflective_alias(self, name: str) -> bool:
        """Whether ``name`` was imported as one of the reflective builtins or operators under another name
        (``from builtins import getattr as g``, ``from operator import attrgetter as ag``)."""
        target = self.aliases.get(name, "")
        return (target.startswith("builtins.") and target.split(".", 1)[1] in _REFLECTIVE_BUILTINS) or (
            target.startswith("operator.") and target.split(".", 1)[1] in _REFLECTIVE_OPERATORS
        )

    def visit_BinOp(self, node: ast.BinOp) -> None:
        # Strings put together from pieces ("f_" + "back") are read as the string they make too.
        joined = _joined_string(node)
        if joined is not None and any(part in _FRAME_ATTRIBUTES for part in joined.split(".")):
            self.flag(node, f"names {joined!r}: walking the interpreter's frames or a function's insides reaches "
                            "the evaluator's own code")  # fmt: skip
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = dotted_name(node.func)
        if name in ("type", "builtins.type") and len(node.args) == 3 and isinstance(node.args[1], ast.Tuple):
            self._tensor_bases(node, "made by type()", node.args[1].elts)  # type("S", (torch.Tensor,), {})
        parts = name.split(".")
        if parts and parts[0] in self.aliases:  # see through `import torch.cuda as tc`
            name = ".".join([self.aliases[parts[0]], *parts[1:]])
        if name.startswith("os.") and name.split(".")[-1] in _PROCESS_CALLS:
            self.flag(node, f"calls {name}: starting or signalling processes is not allowed")
        if self.resolved(node.func) in _FILE_CHANGES:
            self.flag(node, f"calls {self.resolved(node.func)}: a kernel builds and computes, it does not remove, "
                            "move or change files (the user's, once it is imported)")  # fmt: skip
        if name in {"contextlib.suppress", "suppress"}:
            self.flag(node, "contextlib.suppress around code: a broken kernel must fail, not fall back")
        if name.rsplit(".", 1)[-1] in {"load_inline", "load"}:
            # the flags written out; those it computes, the host reads as built (build_flags)
            for keyword in node.keywords:
                if keyword.arg in _BUILD_FLAG_ARGUMENTS:
                    words = [n.value for n in ast.walk(keyword.value)
                             if isinstance(n, ast.Constant) and isinstance(n.value, str)]  # fmt: skip
                    for why in build_flags.refused_words(words):
                        self.flag(node, f"{keyword.arg}: {why}: a build runs its compiler, nothing else")
        if name in _STREAM_CALLS or name.endswith("cuda.Stream") or name.endswith("cuda.stream"):
            self.flag(node, f"creates or switches a CUDA stream ({name}): work on a side stream hides from the timer")
        if name in _INTROSPECTION_CALLS or (
            name.split(".")[0] in _FRAME_MODULES and name.rsplit(".", 1)[-1] in _FRAME_GETTERS
        ):
            self.flag(node, f"calls {name}: introspection of the evaluator's process is not allowed")
        method = node.func.attr if isinstance(node.func, ast.Attribute) else name.rsplit(".", 1)[-1]
        if method in {"__getattribute__", "__getattr__", "__delattr__"} and any(
            not isinstance(a, ast.Constant) for a in node.args[1:] or node.args
        ):
            self.flag(node, f"{name or method} with a computed name: what it reaches must be written out")
        on_super = (
            isinstance(node.func, ast.Attribute) and dotted_name(getattr(node.func.value, "func", None)) == "super"
        )
        if (
            (name in {"setattr", "builtins.setattr", "delattr"} or method == "__setattr__")
            and node.args
            and not on_super
        ):
            if self.root(node.args[0]) != "self":
                self.flag(node, f"{name or method} on {dotted_name(node.args[0]) or 'an object'}: monkey-patching is "
                                "not allowed")  # fmt: skip
        if name in {"vars", "globals", "__import__", "builtins.__import__", "eval", "exec", "compile"}:
            self.flag(node, f"calls {name}(): reaching into modules' namespaces or running generated code")
        if name in {"getattr", "builtins.getattr", "hasattr"} and len(node.args) >= 2:
            attribute = node.args[1]
            if not isinstance(attribute, ast.Constant):
                self.flag(node, f"{name} with a computed name: what it reaches must be written out")
            elif isinstance(attribute.value, str) and attribute.value.startswith("_"):
                self.flag(node, f"{name}(..., {attribute.value!r}): private internals are not for kernels")
        if name.rsplit(".", 1)[-1] in {"attrgetter", "methodcaller"}:
            # getattr by another name: attrgetter("_C._DisableTorchDispatch")(torch)
            for argument in node.args[:1] if name.endswith("methodcaller") else node.args:
                if not isinstance(argument, ast.Constant) or not isinstance(argument.value, str):
                    self.flag(node, f"{name} with a computed name: what it reaches must be written out")
                elif any(part.startswith("_") for part in argument.value.split(".")):
                    self.flag(node, f"{name}({argument.value!r}): private internals are not for kernels")
        if self.resolved(node.func) in _PROCESS_WIDE_REGISTRATIONS:
            self.flag(node, f"calls {self.resolved(node.func)}: it changes the whole process that imports the "
                            "kernel, for as long as it lives")  # fmt: skip
        if method in _SEED_READS:
            self.flag(node, f"calls {name or method}: a kernel must behave the same whatever the random "
                            "generators' seed and state")  # fmt: skip
        machinery = _torch_machinery(self.resolved(node.func))
        if machinery:
            self.flag(node, f"calls {self.resolved(node.func)}: {machinery}")
        if (
            name in {"os.getenv", "os.environ.get", "getenv"}
            or name.startswith("os.environ.")
            and name.rsplit(".", 1)[-1] in {"items", "keys", "values", "copy", "__contains__"}
        ):
            self.flag(node, f"calls {name}: a kernel must behave the same in every environment")
        if name.endswith("_make_subclass") or name.endswith("_make_wrapper_subclass"):
            self.flag(node, "builds a tensor subclass: outputs must be plain torch.Tensor")
        resolved = self.resolved(node.func)
        imported = self._of_an_import(node.func)
        if imported and resolved.rsplit(".", 1)[-1].startswith("register"):
            self.flag(node, f"calls {resolved}: a registration changes the library for the whole process that "
                            "imports the kernel")  # fmt: skip
        if isinstance(node.func, ast.Attribute) and node.func.attr in _CONTAINER_CHANGES:
            self._check_container_change(node.func.value, node)
        if resolved in _FILE_READS or (
            isinstance(node.func, ast.Attribute) and node.func.attr in _FILE_METHODS and not imported
        ):
            self.flag(node, f"calls {resolved or node.func.attr}: it reads or probes the machine's files, and "
                            f"{_FILES_WHY}")  # fmt: skip
        self.generic_visit(node)

    def _of_an_import(self, node: ast.AST) -> bool:
        """Whether a dotted expression starts from an imported module (or a name bound to one)."""
        first = dotted_name(node).split(".")[0]
        return bool(first) and (first in self.aliases or first in _PROTECTED_ROOTS)

    def _check_container_change(self, container: ast.AST, node: ast.AST) -> None:
        """A container reached from an imported module, changed in place (os.environ aside: setting a
        compiler's variables is allowed, reading them is not, _reads_environment)."""
        name = self.resolved(container)
        last = name.rsplit(".", 1)[-1]
        if (
            not dotted_name(container)
            or not self._of_an_import(container)
            or name == "os.environ"
            # a module's own function (torch.add, np.insert) or a class's method (torch.Tensor.add), not a table
            or name in self.modules | _PROTECTED_ROOTS
            or (last[:1].isupper() and not last.isupper())
        ):
            return
        self.flag(node, f"changes {name} in place: what an imported module holds is the library's, for the whole "
                        "process that imports the kernel")  # fmt: skip

    def _check_assign_target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Subscript) and _namespace_of(target.value):
            self.flag(target, "assigns through a namespace dictionary (vars(), __dict__): monkey-patching")
        elif isinstance(target, ast.Subscript):
            self._check_container_change(target.value, target)
        if isinstance(target, ast.Attribute):
            root = self.root(target)
            if self.resolved(target).startswith(_BACKEND_FLAGS):
                return
            if root in _PROTECTED_ROOTS or root in self.aliases:
                # any imported module's (a review, 2026-12-01: tempfile.tempdir set at import moved every
                # temporary file of the importing process into the candidate's folder)
                self.flag(
                    target,
                    f"assigns {dotted_name(target)}: monkey-patching an imported module (torch, timers, the evaluator, "
                    "the standard library) changes the process that imports the kernel",
                )
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._check_assign_target(elt)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_assign_target(target)
        # `_lang = tl` is an alias as `import triton.language as _lang` is: what is set through it is
        # set on the module (a fresh review, 2026-11-26: a function put into triton.language that way)
        if isinstance(node.value, (ast.Name, ast.Attribute)) and self.root(node.value) in _PROTECTED_ROOTS:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.aliases[target.id] = self.resolved(node.value)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                self._check_container_change(target.value, target)
            elif isinstance(target, ast.Attribute) and self._of_an_import(target):
                self.flag(target, f"deletes {dotted_name(target)}: monkey-patching an imported module")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_assign_target(node.target)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._tensor_bases(node, node.name, node.bases)
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name in _SUBCLASS_HOOKS:
                self.flag(item, f"defines {item.name}: intercepting torch calls is not allowed")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in _WHERE_IT_LIES or self.resolved(node) in _WHERE_IT_LIES_CALLS:
            self.flag(node, f"reads {self.resolved(node) or node.attr}, where a module lies: no kernel's business (it "
                            "must behave the same wherever it is built and loaded from)")  # fmt: skip
        if self.resolved(node) == "numpy.ctypeslib":
            self.flag(node, "uses numpy.ctypeslib: numpy's door to native libraries (a BLAS behind forge's back)")
        if dotted_name(node) == "sys.modules" or (self.root(node) == "sys" and node.attr == "modules"):
            self.flag(node, "reads sys.modules: reaching into the evaluator's modules is not allowed")
        if self.resolved(node) in _HOW_IT_WAS_STARTED:
            self.flag(node, f"reads {self.resolved(node)}: {_STARTED_WHY}")
        if node.attr == "__dict__":
            self.flag(node, "uses __dict__: reaching into namespaces is not allowed in a kernel")
        if node.attr in _PROVENANCE:
            self.flag(node, f"reads .{node.attr}: how its inputs were made or who holds them is no kernel's business "
                            "(it must compute the same for a user's tensors)")  # fmt: skip
        if node.attr in _OWNER_ATTRIBUTES:
            self.flag(node, f"reads .{node.attr}, a file's owner or device: {_STARTED_WHY}")
        if node.attr in _FRAME_ATTRIBUTES:
            self.flag(node, f"uses .{node.attr}: walking the interpreter's frames or a function's insides reaches the "
                            "evaluator's own code")  # fmt: skip
        name = self.resolved(node)
        parent = self.parents.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node  # visit_Call says so
        if (node.attr in _REFLECTIVE_OPERATORS or node.attr in _REFLECTIVE_METHODS or name.startswith("builtins.")
                and node.attr in _REFLECTIVE_BUILTINS) and not called:  # fmt: skip
            self.flag(node, f"uses {name} other than by calling it (an alias, an argument, a value kept): what it "
                            "reaches must be written out where it is called")  # fmt: skip
        if node.attr in _SUBCLASS_HOOKS:
            self.flag(node, f"uses .{node.attr}: intercepting torch calls is not allowed")
        if _torch_machinery(name) and not isinstance(parent, ast.Attribute) and not called:
            # a base class or a value as well as a call (a fresh review, 2026-11-27: a TorchFunctionMode)
            self.flag(node, f"uses {name}: {_torch_machinery(name)}")
        if (
            name.startswith("torch._")
            and not name.startswith("torch.__")
            and not isinstance(self.parents.get(id(node)), ast.Attribute)
        ):
            self.flag(node, f"uses {name}: PyTorch's private internals are not for kernels")
        elif (
            self._of_an_import(node)
            and any(_private(part) for part in name.split(".")[1:])
            and not isinstance(parent, ast.Attribute)
        ):
            # any library's, at any depth (a review, 2026-12-02: torch.utils.data._utils.collate's table)
            self.flag(node, f"uses {name}: a library's private internals are not for kernels")
        if name == "os.environ" and self._reads_environment(node):
            self.flag(node, "reads os.environ: a kernel must behave the same in every environment")
        self.generic_visit(node)

    def _reads_environment(self, node: ast.AST) -> bool:
        """``os.environ`` read (a lookup, a membership test, a copy), not set for a compiler: ``setdefault``
        and ``pop`` return what the variable held, so only a call whose value is dropped sets (a review,
        2026-12-01: ``setdefault``'s value told forge's runner, whose environment holds PYTHONSAFEPATH, from
        a user's process, and the variable was popped again)."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Subscript):
            return isinstance(parent.ctx, ast.Load)
        if isinstance(parent, ast.Attribute):
            if parent.attr in {"update", "__setitem__"}:
                return False
            if parent.attr in {"setdefault", "pop"}:
                call = self.parents.get(id(parent))
                return not (isinstance(call, ast.Call) and call.func is parent
                            and isinstance(self.parents.get(id(call)), ast.Expr))  # fmt: skip
            return True
        return True

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str) or id(node) in self.docstrings:
            return
        if any(part in _FRAME_ATTRIBUTES for part in node.value.split(".")):
            # getattr(frame, "f_back"), attrgetter("tb_frame.f_back"), object.__getattribute__(f, "f_locals")
            self.flag(node, f"names {node.value!r}: walking the interpreter's frames or a function's insides reaches "
                            "the evaluator's own code")  # fmt: skip
        text = _native_text(node.value)
        for marker in _PRIVATE_PATHS:
            at = text.find(marker)
            if at >= 0:
                self.flag(
                    node,
                    f"refers to {text[at : at + 40]!r}: reading the evaluator's files or other processes is not allowed",
                )
                break
        for marker, why in _native_flags(text):
            self.flag(node, f"its C++/CUDA source {why} ({marker})")

    def visit_Try(self, node: ast.Try) -> None:
        # A try/except in module code that only guards imports is harmless; anywhere
        # else it is how a broken kernel silently falls back to PyTorch.
        guarded_imports = all(isinstance(stmt, (ast.Import, ast.ImportFrom)) for stmt in node.body)
        if node.handlers and not guarded_imports:
            self.flag(node, "try/except around code: a broken kernel must fail, not fall back")
        elif _leaves(node.finalbody):
            self.flag(
                node, "a finally block that returns, breaks or continues drops the exception: a broken kernel must fail"
            )
        self.generic_visit(node)

    visit_TryStar = visit_Try


def _leaves(body: list) -> bool:
    """Whether a ``finally`` block returns, breaks or continues: that drops the exception in flight."""
    found = False

    class _Exits(ast.NodeVisitor):
        def visit_Return(self, node):
            nonlocal found
            found = True

        visit_Break = visit_Continue = visit_Return

        def visit_FunctionDef(self, node):  # a function defined there leaves only itself
            pass

        visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    for stmt in body:
        _Exits().visit(stmt)
    return found


# Names with a leading underscore that are a library's documented, public API
_PUBLIC_UNDERSCORED = frozenset({"_exit"})


def _private(part: str) -> bool:
    """``_utils``, ``_KL_REGISTRY``: a private name; ``__version__``, ``__name__`` and ``os._exit`` are not."""
    return (
        part.startswith("_") and not (part.startswith("__") and part.endswith("__")) and part not in _PUBLIC_UNDERSCORED
    )


def _torch_machinery(name: str) -> str:
    """Why a use of this dotted name is flagged, when it is one of _TORCH_MACHINERY."""
    for prefix in _TORCH_MACHINERY:
        if name == prefix or name.startswith(prefix + "."):
            return "PyTorch's compilers, dispatch hooks and profilers are not for kernels (they do PyTorch's work, or watch forge's census)"
    return ""


def _namespace_of(node: ast.AST) -> bool:
    """``vars(x)``, ``globals()`` or ``x.__dict__``: a module's or object's namespace as a dict."""
    if isinstance(node, ast.Call):
        return dotted_name(node.func) in {"vars", "globals", "locals"}
    return isinstance(node, ast.Attribute) and node.attr == "__dict__"


def _split_red_flags(tree: ast.AST, visitor: _Visitor) -> list[str]:
    """C++/CUDA red flags split across string constants (``"c10::im" + "pl::"``, adjacent pieces, an
    f-string's parts): all of the module's strings, read in order as one."""
    pieces = sorted(
        (node.lineno, node.col_offset, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in visitor.docstrings
    )
    joined, ends = "", []  # ends[i]: where piece i ends in ``joined``
    for _, _, value in pieces:
        joined += _native_text(value)
        ends.append(len(joined))
    flagged = " ".join(visitor.findings)
    findings = []
    for marker, why in _NATIVE_RED_FLAGS.items():
        at = _finds(joined, marker)
        if at < 0 or f"({marker})" in flagged:
            continue
        line = pieces[bisect.bisect_left(ends, at + len(marker))][0]  # the piece that completes it
        findings.append(f"line {line}: its C++/CUDA source, split across strings, {why} ({marker})")
    return findings


_DIRECTIVE = re.compile(r"[ \t]*(?:#|%:)[ \t]*(?:define|undef)\b")
_REGISTERS_UNDER_ATEN = "registers kernels as PyTorch's own operators (aten): the reference's work, redirected"


def _expanded_red_flags(tree: ast.AST, visitor: _Visitor, backends: list[str]) -> list[str]:
    """C++/CUDA red flags that only macro expansion shows: names pasted together by macros (the
    candidate's own ``##`` or a header's), read as the preprocessor expands them (cpp_expansion), in
    every source a load_inline extension may be built from: its strings in order, joined as one
    expression joins them and as a list of sources is joined (a line each), and with every directive
    first (strings put together in another order than the file's)."""
    pieces = sorted(
        (node.lineno, node.col_offset, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in visitor.docstrings
    )
    values = [value for _, _, value in pieces]
    signs = ("#", "%:")
    builds = bool({"cpp", "cuda"} & set(backends)) or _names_an_extension_build(tree)
    if not (builds or any(sign in value for value in values for sign in signs)):
        return []  # no C++ to build, nothing for a preprocessor to expand
    line = next(
        (line for line, _, value in pieces if any(sign in value for sign in signs)), pieces[0][0] if pieces else 1
    )
    defines, files = cpp_expansion.compiler_flags(values)
    findings = [f"line {line}: passes a file to its compiler's preprocessor ({word[:40]!r})" for word in files]
    flagged = " ".join(visitor.findings)
    red_flags = {**_NATIVE_RED_FLAGS, cpp_expansion.REGISTERS_UNDER_ATEN: _REGISTERS_UNDER_ATEN}
    hoisted = "\n".join(line for value in values for line in value.split("\n") if _DIRECTIVE.match(line))
    texts = ["".join(values), "\n".join(values), hoisted + "\n" + "\n".join(values)]
    expanded = cpp_expansion.expansions(texts, defines)
    if isinstance(expanded, str):
        if expanded == cpp_expansion.NO_COMPILER and not builds:
            return findings  # a "#" in a string of a candidate that builds no C++, and nothing to expand it with
        return [*findings, f"line {line}: its C++/CUDA source {expanded}"]
    for reading, code in expanded.items():
        code = _native_text(code)
        for marker, why in red_flags.items():
            if f"({marker})" not in flagged and _finds(code, marker) >= 0:
                findings.append(f"line {line}: its C++/CUDA source, once its macros are expanded ({reading}), "
                                f"{why} ({marker})")  # fmt: skip
                flagged += f" ({marker})"
    return findings


# Names through which a module reaches PyTorch's C++ extension builder, called under any alias.
_EXTENSION_BUILD_NAMES = frozenset({"cpp_extension", "load_inline", "CppExtension", "CUDAExtension", "BuildExtension"})


def _joined_string(node: ast.AST) -> str | None:
    """The string an expression of string constants joined by ``+`` (or repeated by ``*``) makes, or None
    (a review, 2026-12-02: ``"_" * 2 + "code" + "_" * 2``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _joined_string(node.left), _joined_string(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for text, times in ((node.left, node.right), (node.right, node.left)):
            piece = _joined_string(text)
            if piece is not None and isinstance(times, ast.Constant) and type(times.value) is int:
                return piece * max(0, min(times.value, 64))
    return None


def _names_an_extension_build(tree: ast.AST) -> bool:
    """Whether the module names PyTorch's C++ extension builder anywhere (an import, an attribute, an
    alias), whether or not its call reads as ``load_inline(...)``."""
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.alias):
            names = node.name.split(".")
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = node.module.split(".")
        if _EXTENSION_BUILD_NAMES.intersection(names):
            return True
    return False


def native_red_flags(source: str) -> list[tuple[str, str]]:
    """(marker, why) for each rule for native code that C++/CUDA ``source`` breaks, read as its compiler
    reads it: the rules the check holds a candidate's strings to, for the sources it was built from
    (native_code.py)."""
    text = _native_text(source)
    paths = [(marker, "refers to the evaluator's files or other processes") for marker in _PRIVATE_PATHS
             if marker in text]  # fmt: skip
    return paths[:1] + _native_flags(text)


def _native_flags(text: str) -> list[tuple[str, str]]:
    return [(marker, why) for marker, why in _NATIVE_RED_FLAGS.items() if _finds(text, marker) >= 0]


def _native_text(value: str) -> str:
    """C++ as its compiler reads it: without its comments (in source of more than one line: a comment
    names nothing the kernel does), adjacent literals joined (``"/pr" "oc/"`` is ``"/proc/"``), and
    ``py :: module_ :: import`` is ``py::module_::import``."""
    if "\n" in value.replace("\\\n", ""):
        value = cpp_expansion.without_comments(value)
    else:  # one line: nothing in it is left out, a "//" in a URL or anywhere else
        value = value.replace("\\\n", "")
    value = re.sub(r'"\s*"', "", value)
    return re.sub(r"\s*::\s*", "::", value)


def _finds(text: str, marker: str) -> int:
    """Where ``marker`` occurs in ``text`` as a name of its own (``Copy::eval`` is not ``py::eval``), or -1.
    Those in _AFTER must also be followed as that says: ending where the name ends (``prctl_scale`` is
    not ``prctl``), used as they are flagged for (``std::thread::hardware_concurrency()`` starts no
    thread; ``-march=native`` names no namespace)."""
    if not (marker[0].isalnum() or marker[0] == "_"):
        return text.find(marker)
    found = re.search(r"(?<![A-Za-z0-9_])" + re.escape(marker) + _AFTER.get(marker, ""), text)
    return found.start() if found else -1


_END_OF_NAME = r"(?![A-Za-z0-9_])"
# Markers that are flagged as whole names only (``prctl_scale`` is not ``prctl``, ``environment`` not ``environ``)
_WHOLE_NAMES = ("prctl", "mprotect", "dlopen", "dlsym", "environ", "_environ", "__environ", "setenv", "putenv",
                "unsetenv", "clearenv", "set_offset", "fopen")  # fmt: skip
_AFTER = {
    **{name: _END_OF_NAME for name in _WHOLE_NAMES},
    # std::thread's members that start no thread
    **{
        name: r"(?![A-Za-z0-9_]|\s*::\s*(?:id|hardware_concurrency|native_handle_type)\b)"
        for name in ("std::thread", "std::jthread")
    },
    # used as a namespace: `native::`, `= native;`, `namespace native {`
    **{name: _END_OF_NAME + r"(?=\s*(?:::|;|\{))" for name in ("native", "_ops", "redispatch")},
}


def check_source(source: str) -> StaticReport:
    """Parse a candidate's source and report its kernel backends and red flags."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return StaticReport(syntax_error=f"line {exc.lineno}: {exc.msg}")
    visitor = _Visitor(tree)
    visitor.visit(tree)
    backends = _kernel_backends(tree, source)
    visitor.findings += _split_red_flags(tree, visitor)
    visitor.findings += _expanded_red_flags(tree, visitor, backends)
    visitor.findings += _triton_kernels_calling_python(tree, visitor)
    report = StaticReport(backends=backends, kernel_names=_kernel_names(tree, source), findings=visitor.findings)
    if not report.backends:
        report.findings.insert(
            0,
            "no custom kernel: the source defines no @triton.jit kernel, load_inline extension or CuPy RawKernel/RawModule",
        )
    return report
