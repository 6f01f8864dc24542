"""The static check finds the kernel backends and flags what no honest kernel needs."""

from __future__ import annotations

import textwrap

import pytest

from forge_sandbox.static_check import check_source


def check(src: str):
    return check_source(textwrap.dedent(src))


TRITON = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr):
    pass
"""


@pytest.mark.parametrize(
    "src, backend",
    [
        (TRITON, "triton"),
        ("from torch.utils.cpp_extension import load_inline\nm = load_inline(name='a', cpp_sources='')\n", "cpp"),
        (
            "import torch.utils.cpp_extension as ce\nm = ce.load_inline('a', cpp_sources='', cuda_sources='__global__ void k(){}')\n",
            "cuda",
        ),
        ("import cupy as cp\nk = cp.RawKernel('extern \"C\" __global__ void k(){}', 'k')\n", "cupy"),
        ("import cupy\nm = cupy.RawModule(code='')\n", "cupy"),
    ],
)
def test_backends_are_recognised(src, backend):
    report = check(src)
    assert report.backends == [backend]
    assert report.ok, report.findings


def test_pytorch_only_source_has_no_custom_kernel():
    report = check("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n")
    assert not report.ok and report.findings[0].startswith("no custom kernel")


@pytest.mark.parametrize(
    "snippet, words",
    [
        ("import threading", "threading"),
        # outside review, round 14: a Parameter subclass hid a GEMM's work from the census
        ("import torch\nclass P(torch.nn.Parameter):\n    pass", "subclasses torch.nn.Parameter"),
        ("import torch\nS = type('S', (torch.Tensor,), {})", "subclasses torch.Tensor"),
        ("from concurrent.futures import ThreadPoolExecutor", "concurrent.futures"),
        ("import multiprocessing", "multiprocessing"),
        ("import torch\ns = torch.cuda.Stream()", "stream"),
        ("import torch\nwith torch.cuda.stream(None):\n    pass", "stream"),
        ("from torch.cuda import Stream", "stream"),
        ("import time\ntime.perf_counter = lambda: 0.0", "monkey-patching"),
        ("import torch\ntorch.allclose = lambda *a: True", "monkey-patching"),
        ("import torch\nsetattr(torch.cuda, 'Event', None)", "monkey-patching"),
        ("import torch\nclass T(torch.Tensor):\n    pass", "subclasses torch.Tensor"),
        ("class T:\n    def __torch_function__(self, *a):\n        pass", "__torch_function__"),
        ("import torch\nx = torch.Tensor._make_subclass(object, torch.empty(0))", "subclass"),
        ("def f():\n    try:\n        return 1\n    except Exception:\n        return 2", "try/except"),
        ("import gc\nobjs = gc.get_objects()", "introspection"),
        ("import sys\nf = sys._getframe(1)", "introspection"),
        ('SRC = "c10::im" + "pl::Exclude"', "split across strings"),
        ('SRC = ("at::nat" "ive::softmax")', "(native)"),
        # red team, round 6: native code reaching back into the interpreter, or remapping loaded code
        ("SRC = 'auto t = py::module_::import(\"time\");'", "imports Python modules from native code"),
        ('SRC = "PyObject* m = PyImport_ImportModule(name);"', "imports Python modules from native code"),
        ("SRC = 'py::setattr(m, \"perf_counter\", f);'", "rebinds Python attributes"),
        ('SRC = "py::exec(code);"', "runs Python code from native code"),
        ('SRC = "auto g = torch._C._DisableTorch" "Dispatch"', "dispatch hooks"),
        ('NAME = "forge_" + "sandbox.timing"', "forge's own modules"),
        ('SRC = "mmap(addr, n, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, off);"', "existing mappings"),
        ('SRC = "dl_iterate_phdr(callback, &found);"', "loaded libraries"),
        ('SRC = "prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);"', "PR_SET_DUMPABLE"),
        # its review: spaces around '::', raw system calls, attributes set through an object passed in
        ('SRC = "auto t = py :: module_ :: import(name);"', "imports Python modules from native code"),
        ('SRC = "syscall(157, 4, 0);"', "raw system calls"),
        ("SRC = 'clock.attr(\"perf_counter\") = fake;'", "Python attributes"),
        # red team, round 10: PyTorch's kernels compiled in from its headers; the runner's frames walked
        ('SRC = "#include <ATen/native/cpu/LogSoftmaxKernelImpl.h>"', "kernel implementations"),
        ('SRC = "using namespace at :: native;"', "(native)"),
        ('SRC = "namespace at { namespace native { void f(); } }"', "(native)"),
        ('SRC = "using namespace at;\\nauto y = native::softmax(x, 1, false);"', "(native)"),
        # its review: what the compiler's lexer reads otherwise (a raw string, a digit separator, a
        # spliced line) hides nothing; nor does an alias of ATen's namespaces or a finally that returns
        (
            'SRC = """\nconst char* a = R"(" /* )";\nint f() { return prctl(4, 0); }\nconst char* b = "*/";\n"""',
            "(prctl)",
        ),
        ('SRC = """\nint a = 1\'0 + (int)sizeof("\'//"); int f() { return prctl(4, 0); }\n"""', "(prctl)"),
        ('SRC = r"""\nint f() { return pr\\\nctl(4, 0); }\n"""', "(prctl)"),
        ('SRC = "using namespace at; namespace o = _ops;"', "(_ops)"),
        ("def f(x):\n    try:\n        x = x + 1\n    finally:\n        return x", "drops the exception"),
        ('SRC = "struct T : std::thread::thread { using thread::thread; };"', "(std::thread)"),
        ('SRC = "using namespace at;\\nauto y = cpu::_softmax(x, 1, false);"', "(cpu::)"),
        ('SRC = "std::thread worker(f);"', "(std::thread)"),
        ('SRC = "std::thread{f}.detach();"', "(std::thread)"),
        ("def f(e):\n    return e.__traceback__.tb_frame.f_back.f_globals", "walking the interpreter's frames"),
        ("def f(g):\n    return g.gi_frame", "walking the interpreter's frames"),
        ("import numpy as np\n@triton.jit\ndef k2(p):\n    np.sum(p)", "calls numpy.sum"),
        ("def helper():\n    pass\n@triton.jit\ndef k3(p):\n    helper()", "calls helper"),
        # red team, round 12: how its process was started; a path split into adjacent C++ literals
        ("import sys\nTOLD = '--x' in sys.argv", "reads sys.argv"),
        ("import sys\nTOLD = sys.orig_argv", "reads sys.orig_argv"),
        ("from sys import orig_argv", "imports sys.orig_argv"),
        ("import os\nTOLD = os.getppid() == 1", "reads os.getppid"),
        ('SRC = """\nstd::ifstream f("/pr" "oc/self/cmdline");\n"""', "'/proc/self/cmdline"),
        # a fresh review, 2026-11-26: frames from a function that hands them out, reached by name
        ("import logging\nF = logging.currentframe()", "calls logging.currentframe"),
        ("import traceback\nS = traceback.walk_stack(None)", "calls traceback.walk_stack"),
        ('def f(x):\n    return getattr(x, "f_back")', "names 'f_back'"),
        ('from operator import attrgetter\nG = attrgetter("tb_frame.f_locals")', "names 'tb_frame.f_locals'"),
        ("def f(x, n):\n    return object.__getattribute__(x, n)", "with a computed name"),
        ("def f(g):\n    return g.__closure__[0].cell_contents", "uses .__closure__"),
        ("import triton.language as tl\n_lang = tl\n_lang.reduce_rows = print", "assigns _lang.reduce_rows"),
        ("import numpy as np\n_n = np\n_n.exp = print", "assigns _n.exp"),
        # a fresh review, 2026-11-27: right only where the runner's interpreter flags, or the owner of "/",
        # were forge's; the machine's /proc listed
        ("import sys\nTOLD = sys.flags.safe_path", "reads sys.flags"),
        ("import os\nTOLD = os.stat('/').st_uid == 65534", "reads os.stat"),
        ("from pathlib import Path\nTOLD = Path('/').stat().st_uid", "reads .st_uid"),
        ("import shutil\nTOLD = shutil.disk_usage('/tmp').total", "reads shutil.disk_usage"),
        ("import os\nTOLD = len(os.listdir('/proc'))", "'/proc'"),
        ("import os\nHERE = os.getcwd()", "reads os.getcwd"),
        # a review, 2026-11-29: what files exist, and the processors it may use, tell one process from another
        ("import os\nTOLD = os.path.isdir(os.path.expanduser('~/.cache/forge_export'))", "reads os.path.isdir"),
        ("from os.path import exists\nTOLD = exists('/x')", "imports os.path.exists"),
        ("import os\nTOLD = len(os.sched_getaffinity(0))", "reads os.sched_getaffinity"),
        # ... and the seed forge draws for a trial; registrations that outlive the import
        ("import torch\nTOLD = torch.initial_seed() >= 2**32", "calls torch.initial_seed"),
        ("import torch\nG = torch.default_generator.initial_seed()", "calls torch.default_generator.initial_seed"),
        ('SRC = "auto s = at::detail::getDefaultCPUGenerator().current_seed();"', "(current_seed)"),
        # a review, 2026-12-04: native code that seeded torch's generator, read the C-level environment and
        # wrote ~/.bashrc through a C++ file stream
        ('SRC = "at::detail::getDefaultCPUGenerator().set_current_seed(1234);"', "(set_current_seed)"),
        ('SRC = "extern char **environ; bool told = environ != nullptr;"', "(environ)"),
        ('SRC = "#include <fstream>\\nstd::ofstream rc(home);"', "(fstream)"),
        ('SRC = "setenv(\\"PYTHONPATH\\", \\"/tmp/x\\", 1);"', "(setenv)"),
        ("import sys\nsys.addaudithook(print)", "calls sys.addaudithook"),
        ("import atexit, os\natexit.register(os._exit, 0)", "calls atexit.register"),
        ("import numpy as np\nnp.seterr(all='raise')", "calls numpy.seterr"),
        ("from torch.optim.optimizer import register_optimizer_step_pre_hook as h\nh(print)",
         "calls torch.optim.optimizer.register_optimizer_step_pre_hook"),
        ("import torch\ntorch.serialization.add_safe_globals([print])", "calls torch.serialization.add_safe_globals"),
        # a review, 2026-12-02: a library's registries changed in place at import, its private modules reached at
        # any depth, a registration by a public function; the machine's files probed through a path object
        ("import torch\ntorch.utils.data._utils.collate.default_collate_fn_map.update({})", "changes torch.utils.data"),
        ("import torch\nT = torch.utils.data._utils", "uses torch.utils.data._utils"),
        ("from torch.distributions.kl import _KL_REGISTRY", "private internals (_KL_REGISTRY)"),
        ("import torch.distributions as d\nR = d.kl.KL\nR[(1, 2)] = print", "changes torch.distributions.kl.KL in place"),
        ("import sys\nsys.path.append('/x')", "changes sys.path in place"),
        ("import torch\ndel torch.nn.functional.SOME[0]", "changes torch.nn.functional.SOME in place"),
        ("from torch.distributions.kl import register_kl\n@register_kl(int, int)\ndef f(p, q):\n    return 0",
         "calls torch.distributions.kl.register_kl"),
        ("import codecs\ncodecs.register(print)", "calls codecs.register"),
        ("import pathlib\nTOLD = any(pathlib.Path('/sys/fs/cgroup').iterdir())", "calls iterdir"),
        ("import pathlib\nTOLD = pathlib.Path('/x').exists()", "calls exists"),
        ("TOLD = open('/sys/fs/cgroup/cgroup.controllers').read()", "calls open"),
        ("import numpy as np\nW = np.load('/x.npy')", "calls numpy.load"),
        # review 47: how an input was made or who holds it (forge's are leaves held by one list); a fifo made
        ("import sys\ndef f(x):\n    return sys.getrefcount(x) == 7", "reads .getrefcount"),
        ("def f(x):\n    return x.grad_fn is None", "reads .grad_fn"),
        ("def f(x):\n    return x._version", "reads ._version"),
        ("import os\nos.mkfifo('checkpoint.pt')", "calls os.mkfifo"),
        ("import functools\nN = '_' * 2 + 'code' + '_' * 2", "names '__code__'"),
        ("import torch\ntorch.default_generator.manual_seed(1)", "calls torch.default_generator.manual_seed"),
        ("import torch\nS = torch.default_generator.get_state()", "calls torch.default_generator.get_state"),
        ("import warnings\nwarnings.filterwarnings('ignore', '.*')", "calls warnings.filterwarnings"),
        ("import os\nos.putenv('PYTHONPATH', '/tmp/x')", "calls os.putenv"),
        ("import torch\ntorch.set_printoptions(precision=1)", "calls torch.set_printoptions"),
        # the same review: a hook bound by assignment in a class body, and a TorchFunctionMode as a base class
        ("class M:\n    __torch_function__ = print", "assigns __torch_function__"),
        (
            "import torch\nclass M(torch.overrides.TorchFunctionMode):\n    pass",
            "uses torch.overrides.TorchFunctionMode",
        ),
    ],
)
def test_red_flags(snippet, words):
    report = check(TRITON + "\n" + snippet + "\n")
    assert not report.ok
    assert any(words in finding for finding in report.findings), report.findings
    assert all(finding.startswith("line ") for finding in report.findings)


def test_a_red_flag_is_a_name_of_its_own():
    report = check(TRITON + 'SRC = "out = Copy::eval(x); y = my_dlopen_count; namespace attn { int f(); }"\n')
    assert report.ok, report.findings
    # red team, round 13: honest C++ that used ATen's namespace, asked for the core count, named a scale
    source = (
        'SRC = "using namespace at;\\nTensor y = empty_like(x);\\n'
        'int n = std::thread::hardware_concurrency(); float prctl_scale = 1.f; int environment_rows = 2;"\n'
        'FLAGS = ["-O3", "-march=native"]\n'
    )
    report = check(TRITON + source)
    assert report.ok, report.findings


def test_what_an_honest_kernel_changes_is_its_own():
    # the rules on containers and private names are about imported modules: a kernel's own caches, its
    # compiler's environment and a module's dunders are its business
    source = (
        "import os\nimport torch\n"
        'os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"\nos.environ.update({"CXX": "g++"})\n'
        "VERSION = torch.__version__\nCACHE = {}\nCACHE.update({1: 2})\nCACHE[3] = 4\n"
        "class K:\n    def __init__(self):\n        self._plans = {}\n        self._plans.clear()\n"
        "        self.layers = torch.nn.ModuleList()\n        self.layers.append(torch.nn.Identity())\n"
        # a module's functions and a class's methods named as a container's are calls, not changes
        "import numpy as np\nimport torch.nn.functional as F\n"
        "def f(x, y):\n    return torch.add(y, x), np.insert(y, 0, 1), torch.Tensor.add(x, y), torch.sort(x)\n"
    )
    report = check(TRITON + source)
    assert report.ok, report.findings


def test_try_finally_is_no_fallback():
    report = check(TRITON + "def f(x):\n    try:\n        return x + 1\n    finally:\n        x = None\n")
    assert report.ok, report.findings


def test_comments_in_cpp_source_name_nothing_it_does():
    source = '''SRC = """
    // the same formula as namespace at (ATen) uses; tiles sized from /proc/cpuinfo's cache sizes
    /* not at::native's kernel */
    const char* url = "http://example.org";  // a "//" inside a literal starts no comment
    """
    '''
    report = check(TRITON + textwrap.dedent(source))
    assert report.ok, report.findings
    # A literal keeps what it holds, comment markers and all.
    report = check(TRITON + 'SRC = """\nconst char* p = "//x/proc/self/maps";\n"""\n')
    assert any("/proc/self/maps" in finding for finding in report.findings), report.findings


def test_try_around_imports_is_fine_and_external_streams_are_allowed():
    src = TRITON + "try:\n    import cupy\nexcept ImportError:\n    cupy = None\n"
    src += "import torch\ns = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)\n"
    report = check(src)
    assert report.ok, report.findings


def test_syntax_error_is_reported_with_its_line():
    report = check("def f(:\n  pass\n")
    assert report.syntax_error and report.syntax_error.startswith("line 1")


@pytest.mark.parametrize(
    "snippet",
    [
        "import pkgutil\nm = pkgutil.resolve_name('forge_sandbox.timing')\n",
        "import runpy\n",
        "import zipimport\n",
        "from importlib import import_module\n",
        "import pydoc\nm = pydoc.locate('forge_sandbox.timing')\n",
        "import pickle\n",
        "from unittest import mock\n",
        "import numpy as np\nf = np.ctypeslib.load_library('libx', '.')\n",
        "from numpy import ctypeslib\n",
        "import numpy.ctypeslib as nc\n",
    ],
)
def test_modules_reached_by_a_computed_name_and_numpys_native_door_are_flagged(snippet):
    # Red team round 7: forge_sandbox.timing reached through pkgutil.resolve_name, a BLAS through
    # np.ctypeslib, with neither an import of forge_sandbox nor ctypes in the source.
    findings = " ".join(check(TRITON + snippet).findings)
    assert "dynamic imports" in findings or "numpy.ctypeslib" in findings, findings


def test_numpy_itself_is_no_red_flag():
    assert check(TRITON + "import numpy as np\nx = np.exp(np.ones(3))\n").findings == []


def test_a_triton_kernel_may_call_triton_its_own_jit_functions_and_methods():
    source = """
import triton
import triton.language as tl
from triton.language import arange

@triton.jit
def _square(x):
    return x * x

@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, act: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    for i in range(2):
        x = _square(x)
    tl.store(out_ptr + offs, act(max(x, 0.0)), mask=offs < n)
"""
    assert check(source).ok, check(source).findings


CPP = (
    'from torch.utils.cpp_extension import load_inline\nSRC = r"""\n#include <torch/extension.h>\n{body}\n"""\n'
    'ext = load_inline("ext", cpp_sources=SRC)\n'
)


def cpp(body: str):
    return check_source(CPP.format(body=textwrap.dedent(body)))


@pytest.mark.parametrize(
    "body, marker",
    [
        # red team, round 14: a name pasted by the candidate's own macro, Python's source stringized
        ("#define J(a, b) a##b\n#define S(...) #__VA_ARGS__\nint f() { return J(PyR, un_SimpleString)(S(import gc)); }",
         "(PyRun_)"),
        # pasted by a header's macro
        ('void* f() { return C10_CONCATENATE(dl, open)("x", 2); }', "(dlopen)"),
        # in a branch the check's own reading does not take
        ('#ifdef FORGE_NOT_DEFINED\nvoid* f() { return C10_CONCATENATE(dl, open)("x", 2); }\n#endif', "(dlopen)"),
        ("#ifdef __CUDACC__\n#define T(a, b) a##b\nT(std::thr, ead) t([] {});\n#endif", "(std::thread)"),
        # PyTorch's own operators taken over through the registration macro
        ('TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("softmax", &f); }', "(forge_library_aten)"),
    ],
)  # fmt: skip
def test_names_made_by_macros_are_read_as_the_preprocessor_expands_them(body, marker):
    report = cpp(body)
    assert any(marker in finding and "once its macros are expanded" in finding for finding in report.findings), (
        report.findings
    )


def test_a_macro_defined_once_per_branch_is_read_with_each_definition():
    # outside review, round 15: the branch the build takes decides which definition it pastes with
    for body in (
        '#ifdef __OPTIMIZE__\n#define J(a, b) a##b\n#else\n#define J(a, b) a b\n#endif\nvoid* h = J(dl, open)("x", 2);',
        "#define J_(a, b) a##b\n#define J(a, b) J_(a, b)\n#ifdef RTLD_NOW\n#define PART open\n#else\n"
        '#define PART error\n#endif\nvoid* h = J(dl, PART)("x", 2);',
    ):
        report = cpp(body)
        assert any("(dlopen)" in finding for finding in report.findings), report.findings


@pytest.mark.parametrize(
    "source",
    [
        # outside review, round 15: no directive at all (load_inline adds the header itself)
        'from torch.utils.cpp_extension import load_inline\n'
        'm = load_inline("m", cpp_sources=["void* f() { return (void*)C10_CONCATENATE(dl, open)(0, 2); }"])\n',
        # sources given as a list (joined a line each), the use before the definition, a macro from a flag
        'from torch.utils.cpp_extension import load_inline\n'
        'm = load_inline("m", cpp_sources=["#include <torch/extension.h>", "#define J(a, b) a##b\\nvoid* h = J(dl, open);"])\n',
        'from torch.utils.cpp_extension import load_inline\nuse = "void* f() { return (void*)J(dl, open); }"\n'
        'defs = "#define J(a, b) a##b"\nm = load_inline("m", cpp_sources=[defs + "\\n" + use])\n',
        'from torch.utils.cpp_extension import load_inline\n'
        'm = load_inline("m", cpp_sources=["void* h = J(dl, open);"], extra_cflags=["-DJ(a,b)=a##b"])\n',
        # a directive spelled with a digraph, a comment or a spliced line
        'from torch.utils.cpp_extension import load_inline\n'
        'm = load_inline("m", cpp_sources=["%:define J(a, b) a%:%:b\\nvoid* h = J(dl, open);"])\n',
    ],
)  # fmt: skip
def test_every_way_the_sources_may_be_put_together_is_expanded(source):
    report = check_source(source)
    assert any("(dlopen)" in finding for finding in report.findings), report.findings


def test_a_directive_in_disguise_reads_no_host_file(tmp_path):
    secret = tmp_path / "secret.h"
    secret.write_text("void* h = dlopen(0, 2);\n")
    for include in ("#/**/include", "%:include", "#\\\ninclude"):
        report = cpp(f'{include} "{secret}"\nint x;')
        assert report.ok, (include, report.findings)


def test_honest_extension_macros_expand_to_nothing_flagged():
    report = cpp("""
        #define CHECK_INPUT(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
        #define KERNEL_NAME(t) scale_##t
        template <typename T> void KERNEL_NAME(kernel)(const T* a, T* b, int64_t n) { for (int64_t i = 0; i < n; ++i) b[i] = a[i]; }
        torch::Tensor f(torch::Tensor x) {
            CHECK_INPUT(x);
            auto y = torch::empty_like(x);
            AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "f", [&] {
                scale_kernel<scalar_t>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), x.numel()); });
            return y;
        }
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("f", &f, "f"); }
        TORCH_LIBRARY(myops, m) { m.def("f(Tensor x) -> Tensor"); }
        TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl(TORCH_SELECTIVE_NAME("myops::f"), TORCH_FN(f)); }
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
        #error "this kernel needs sm_70 or newer"
        #endif
        void g() { Py_BEGIN_ALLOW_THREADS Py_END_ALLOW_THREADS }
    """)  # fmt: skip
    assert report.ok, report.findings


def test_expanding_reads_no_file_the_source_names_and_a_macro_bomb_is_a_finding():
    assert cpp('#include "/dev/zero"\n#include "/dev/stdin"\nint x;').ok
    bomb = "".join(f"#define M{i + 1} M{i} M{i} M{i} M{i} M{i} M{i} M{i} M{i} M{i} M{i}\n" for i in range(8))
    report = cpp("#define M0 x\n" + bomb + "M8 M8 M8 M8")
    assert any("macro bomb" in finding for finding in report.findings), report.findings


def test_a_macro_bomb_holds_the_host_for_seconds_not_minutes():
    # Review round 16: a 418-character source whose every reading stayed just under the output bound
    # (six tenfold macros, a macro defined four times for four readings) held the host for 288 s:
    # the bounds are for all of one check's readings together, and an output far larger than its
    # source is a bomb
    body = "#define M0 1\n" + "".join(f"#define M{i + 1} " + f"M{i} " * 10 + "\n" for i in range(6))
    report = cpp(body + "#define V 1\n#define V 2\n#define V 3\n#define V 4\nM6 M6 M6\n")
    assert any("macro bomb" in finding for finding in report.findings), report.findings


@pytest.mark.parametrize(
    "body",
    [
        # Review round 16: a fatal error stopped every reading before the name (a missing dependency)
        '#ifndef RTLD_NOW\n_Pragma("GCC dependency \\"no-such-file\\"")\n#endif\n#define J(a, b) a##b\n'
        'void* f() { return J(dl, open)("libm.so.6", 2); }',
        '#define F(x) x\nvoid* f() { return C10_CONCATENATE(dl, open)("libm.so.6", 2); }\nF(',
    ],
)
def test_a_source_that_stops_its_preprocessor_early_is_a_finding(body):
    report = cpp(body)
    assert any("(dlopen)" in finding or "before the end" in finding for finding in report.findings), report.findings


@pytest.mark.parametrize(
    "flags",
    [
        # Review round 16: flags as the build's shell splits them
        '["-O3 -DJ=dl##open"]',
        '["-D", "J=dl##open"]',
        '["-DJ=dl##open -O2"]',
    ],
)
def test_macros_defined_by_flags_in_any_shape_are_read(flags):
    source = ("from torch.utils.cpp_extension import load_inline\n"
              f'm = load_inline("m", cpp_sources=["void* h = (void*)J;"], extra_cflags={flags})\n')  # fmt: skip
    report = check_source(source)
    assert any("(dlopen)" in finding for finding in report.findings), report.findings


def test_an_extension_built_under_another_name_is_expanded_too():
    # Review round 16: the expansion ran only for a call that read as load_inline(...)
    source = (TRITON + "import torch.utils.cpp_extension as ce\nbuild = ce.load_inline\n"
              'm = build("m", cpp_sources="void* f() { return (void*)C10_CONCATENATE(dl, open); }")\n')  # fmt: skip
    report = check_source(source)
    assert any("(dlopen)" in finding for finding in report.findings), report.findings


def test_strings_the_preprocessor_cannot_take_as_they_are_are_read():
    # Review round 16: a lone surrogate ("\ud800") in any string made the check raise out of evaluate()
    source = (
        'from torch.utils.cpp_extension import load_inline\nX = "\\ud800"\nm = load_inline("m", cpp_sources="int x;")\n'
    )
    assert "\\ud800" in source and check_source(source).ok
    report = check(TRITON + 'NOTE = "#1: if the process is killed, lower BLOCK"\nHELP = """\n# Size limit: 4\n"""\n')
    assert report.ok, report.findings  # stderr's words are no finding (GCC echoes the source's lines)


@pytest.mark.parametrize(
    "body",
    [
        # outside review, round 14: a literal right after a name (`return"/*"`) opened no comment
        'int f() { return"/*"; }\nvoid* h = dlopen("a", 2);\nint g() { return"*/"; }',
        # a backslash-newline inside a raw string is not a splice
        'auto s = R"x( )x\\\n" /* )x";\nvoid* h = dlopen("a", 2); // */',
    ],
)
def test_the_cpp_lexer_hides_no_code_behind_a_literal(body):
    report = check(TRITON + f"SRC = r'''\n{body}\n'''\n")
    assert any("(dlopen)" in finding for finding in report.findings), report.findings


def test_comment_and_raw_string_openings_left_open_are_read_once():
    # outside review, round 14: each opening scanned to the end (quadratic: minutes for a large source)
    for opening in ("/*a", 'R"x('):
        report = check(TRITON + f"SRC = '''\nint x;\n{opening * 40000}\n'''\n")
        assert report.ok, report.findings[:2]
