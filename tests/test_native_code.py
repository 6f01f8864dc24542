"""The candidate's native code as it was built: its imports, definitions and the sources beside it."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import pytest

from forge_sandbox import native_code

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler")

SOURCE = r"""
#include <cstddef>
extern "C" void* dlopen(const char*, int);
extern "C" void nnp_inplace_softmax__avx2(std::size_t, float*);
namespace at { namespace native { float scalar_gelu(float x) { return x; } } }
extern "C" float own_kernel(float* v, std::size_t n) {
    if (n == 12345) { dlopen("x", 1); nnp_inplace_softmax__avx2(n, v); }
    return at::native::scalar_gelu(v[0]);
}
"""


def _build(folder, name: str, source: str = SOURCE) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main.cpp").write_text(source)
    out = str(folder / f"{name}.so")
    subprocess.run(["g++", "-shared", "-fPIC", "-O1", "-o", out, str(folder / "main.cpp")], check=True)
    return out


def test_what_an_object_imports_and_defines_is_read_from_its_dynamic_symbols(tmp_path):
    # Red team round 16: C++ decoded at run time named dlopen, at::native and std::thread, which no reading
    # of the candidate's strings found; and NNPACK's softmax, which libtorch_cpu exports, called directly
    imported, defined = native_code.symbols(_build(tmp_path, "ext"))
    assert {"dlopen", "nnp_inplace_softmax__avx2"} <= set(imported) and "own_kernel" in defined
    found = " | ".join(native_code.import_findings(imported, defined))
    assert "(imports dlopen)" in found and "(imports nnp_inplace_softmax__avx2)" in found
    assert "ATen's native kernels, compiled in" in found


def test_an_honest_extensions_imports_break_no_rule():
    # what pybind11, PyTorch's headers, the C++ runtime, OpenMP and CUDA bring into an honest extension
    honest = ["PyObject_GetAttrString", "PyEval_SaveThread", "PyEval_GetBuiltins", "PyErr_Fetch", "_ZN3c104impl23ExcludeDispatchKeyGuardC1ENS_14DispatchKeySetE",
              "_ZN2at4_ops10empty_like4callERKNS_6TensorE", "_ZN5torch8autograd12VariableInfoC1Ev", "_Znwm",
              "_ZdlPvm", "_ZTVN10__cxxabiv117__class_type_infoE", "_ZTISt9exception", "_ZNSt6thread6_StateD2Ev",
              "memcpy@GLIBC_2.14", "expf@GLIBC_2.27", "__cxa_throw@CXXABI_1.3", "_Unwind_Resume@GCC_3.0",
              "__tls_get_addr", "GOMP_parallel", "cudaLaunchKernel", "__cudaRegisterFatBinary",
              "_ZN3c104cuda20getCurrentCUDAStreamEa", "_ITM_deregisterTMCloneTable", "__gmon_start__"]  # fmt: skip
    assert native_code.import_findings(honest, ["_Z12softmax_rowsN2at6TensorE", "PyInit_ext"]) == []
    for name, words in [("PyRun_SimpleString", "runs Python"), ("pthread_create", "threads"), ("mprotect", "protection"),
                        ("_ZN2at6native7softmaxERKNS_6TensorEl", "native kernels"),
                        ("_ZN2at10redispatch4reluEN3c1014DispatchKeySetERKNS_6TensorE", "redispatches"),
                        ("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
                         "threads"), ("Sleef_expf8_u10", "carry"), ("cblas_sgemm", "carry"),
                        ("_ZN6fbgemm10cblas_gemmEv", "carry"),
                        # a fresh review, 2026-11-27: a GELU right only as forge's runner, by getuid from C++; a
                        # thread made for a timer's notice
                        ("getuid@GLIBC_2.2.5", "which process, user or machine"), ("getenv", "how it was started"),
                        ("fopen64", "what lies around it"), ("timer_create@GLIBC_2.34", "threads"),
                        # a review, 2026-12-04: the C-level environment read as data, ~/.bashrc written through
                        # a C++ file stream
                        ("environ@GLIBC_2.2.5", "environment"), ("__environ@GLIBC_2.2.5", "environment"),
                        ("setenv", "environment"), ("unlink@GLIBC_2.2.5", "files"), ("rename", "files"),
                        ("_ZNSt14basic_ofstreamIcSt11char_traitsIcEED1Ev@GLIBCXX_3.4", "files"),
                        ("_ZNSt10filesystem6removeERKNS_7__cxx114pathE", "files")]:  # fmt: skip
        found = native_code.import_findings([name], [])
        assert found and words in found[0], (name, found)


def test_the_objects_it_maps_are_read_where_they_lie_and_its_caches_are_never_trusted(tmp_path):
    cache = tmp_path / "caches" / "torch_extensions_dir"
    built = _build(cache / "ext", "ext")
    triton = tmp_path / "caches" / "triton_cache_dir" / "abc"
    launcher = _build(triton, "__triton_launcher", "extern \"C\" void* dlopen(const char*, int);\n"
                                                  "extern \"C\" void* f() { return dlopen(\"x\", 1); }\n")  # fmt: skip
    os.remove(triton / "main.cpp")
    handles = [ctypes.CDLL(path, mode=os.RTLD_LAZY) for path in (built, launcher)]
    caches, trusted = [str(tmp_path / "caches")], [*native_code.trusted_folders(), str(tmp_path)]
    # a cache folder inside a trusted one (FORGE_SANDBOX_CACHE set so) is the candidate's all the same
    found = native_code.own_objects([os.getpid()], trusted, caches)
    assert built in found and launcher not in found  # Triton's own launcher, where no build lies beside it
    assert built not in native_code.own_objects([os.getpid()], trusted, [])  # in a trusted folder otherwise
    reasons = " | ".join(native_code.findings([os.getpid()], native_code.trusted_folders(), caches))
    assert "ext.so, as built, " in reasons and "(imports dlopen)" in reasons
    assert "ext.so, built from main.cpp, " in reasons and "(dlopen)" in reasons
    del handles
