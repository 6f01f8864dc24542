"""Static checks on a candidate's source, before any of it runs.

These are speed bumps, not the wall: the verdict's real defenses live outside
the candidate's process (see evaluate.py). They exist because they are cheap,
they give the coder agent a precise reason, and a legitimate kernel never needs
any of the constructs flagged here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

# Modules whose attributes a candidate must never reassign.
_PROTECTED_ROOTS = {"torch", "time", "triton", "cupy", "numpy", "np", "builtins", "forge_sandbox", "gc", "os", "sys"}
_THREAD_MODULES = {"threading", "_thread", "concurrent", "multiprocessing", "asyncio", "subprocess", "signal", "pty"}
_INTROSPECTION_MODULES = {"gc", "inspect", "ctypes"}
_NETWORK_MODULES = {"socket", "ssl", "urllib", "urllib3", "http", "requests", "httpx", "ftplib", "smtplib", "aiohttp"}
_INTROSPECTION_CALLS = {"sys._getframe", "sys.settrace", "sys.setprofile", "gc.get_objects", "gc.get_referrers"}
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
_PRIVATE_PATHS = ("/proc/", "/dev/shm", "forge-eval")
_SUBCLASS_HOOKS = {"__torch_function__", "__torch_dispatch__"}


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


def _kernel_backends(tree: ast.AST, source: str) -> list[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_decorator_is_triton_jit(d) for d in node.decorator_list):
            found.add("triton")
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
    names = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and any(_decorator_is_triton_jit(d) for d in node.decorator_list)
    }
    plain = re.sub(r"__launch_bounds__\s*\([^)]*\)", " ", source)
    names.update(re.findall(r"__global__\s+\w[\w:<>]*\s+(\w+)\s*\(", plain))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and dotted_name(node.func).endswith("RawKernel") and len(node.args) >= 2:
            if isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                names.add(node.args[1].value)
    return sorted(names)


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.findings: list[str] = []
        self.aliases: dict[str, str] = {}  # local name -> the module it stands for (import time as t)

    def root(self, node: ast.AST) -> str:
        """The module a dotted expression starts from, seeing through import aliases."""
        first = dotted_name(node).split(".")[0]
        return self.aliases.get(first, first).split(".")[0]

    def flag(self, node: ast.AST, message: str) -> None:
        self.findings.append(f"line {getattr(node, 'lineno', '?')}: {message}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            self.aliases[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._check_module(node, node.module or "")
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
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
        if root in _THREAD_MODULES:
            self.flag(node, f"imports {module}: threads or processes can do work outside the timed call")
        elif root in _INTROSPECTION_MODULES:
            self.flag(node, f"imports {module}: introspection of the evaluator's process is not allowed")
        elif root in _NETWORK_MODULES:
            self.flag(node, f"imports {module}: a kernel has no use for the network (answers fetched from elsewhere?)")

    def visit_Call(self, node: ast.Call) -> None:
        name = dotted_name(node.func)
        parts = name.split(".")
        if parts and parts[0] in self.aliases:  # see through `import torch.cuda as tc`
            name = ".".join([self.aliases[parts[0]], *parts[1:]])
        if name.startswith("os.") and name.split(".")[-1] in _PROCESS_CALLS:
            self.flag(node, f"calls {name}: starting or signalling processes is not allowed")
        if name in {"contextlib.suppress", "suppress"}:
            self.flag(node, "contextlib.suppress around code: a broken kernel must fail, not fall back")
        if name in _STREAM_CALLS or name.endswith("cuda.Stream") or name.endswith("cuda.stream"):
            self.flag(node, f"creates or switches a CUDA stream ({name}): work on a side stream hides from the timer")
        if name in _INTROSPECTION_CALLS:
            self.flag(node, f"calls {name}: introspection of the evaluator's process is not allowed")
        if name in {"setattr", "builtins.setattr"} and node.args:
            target = self.root(node.args[0])
            if target in _PROTECTED_ROOTS:
                self.flag(node, f"setattr on {dotted_name(node.args[0])}: monkey-patching is not allowed")
        if name.endswith("_make_subclass") or name.endswith("_make_wrapper_subclass"):
            self.flag(node, "builds a tensor subclass: outputs must be plain torch.Tensor")
        self.generic_visit(node)

    def _check_assign_target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            root = self.root(target)
            if root in _PROTECTED_ROOTS:
                self.flag(
                    target,
                    f"assigns {dotted_name(target)}: monkey-patching torch, timers or the evaluator is not allowed",
                )
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._check_assign_target(elt)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_assign_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_assign_target(node.target)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if dotted_name(base) in {"torch.Tensor", "Tensor", "torch._C.TensorBase", "torch._C._TensorBase"}:
                self.flag(node, f"class {node.name} subclasses torch.Tensor: outputs must be plain torch.Tensor")
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name in _SUBCLASS_HOOKS:
                self.flag(item, f"defines {item.name}: intercepting torch calls is not allowed")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if dotted_name(node) == "sys.modules" or (self.root(node) == "sys" and node.attr == "modules"):
            self.flag(node, "reads sys.modules: reaching into the evaluator's modules is not allowed")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and any(marker in node.value for marker in _PRIVATE_PATHS):
            self.flag(
                node, f"refers to {node.value[:40]!r}: reading the evaluator's files or other processes is not allowed"
            )

    def visit_Try(self, node: ast.Try) -> None:
        # A try/except in module code that only guards imports is harmless; anywhere
        # else it is how a broken kernel silently falls back to PyTorch.
        if not all(isinstance(stmt, (ast.Import, ast.ImportFrom)) for stmt in node.body):
            self.flag(node, "try/except around code: a broken kernel must fail, not fall back")
        self.generic_visit(node)

    visit_TryStar = visit_Try


def check_source(source: str) -> StaticReport:
    """Parse a candidate's source and report its kernel backends and red flags."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return StaticReport(syntax_error=f"line {exc.lineno}: {exc.msg}")
    visitor = _Visitor()
    visitor.visit(tree)
    report = StaticReport(
        backends=_kernel_backends(tree, source), kernel_names=_kernel_names(tree, source), findings=visitor.findings
    )
    if not report.backends:
        report.findings.insert(
            0,
            "no custom kernel: the source defines no @triton.jit kernel, load_inline extension or CuPy RawKernel/RawModule",
        )
    return report
