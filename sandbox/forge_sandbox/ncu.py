"""Running Nsight Compute on a candidate that passed, and reading its report.

The host starts ``ncu`` on :mod:`forge_sandbox.profile_target` in a session of
its own (a timeout kills ncu, the target and anything it started), restricted
to the candidate's own kernels by name (not PyTorch's, not the L2 flush), to
the one forward pass inside the profiler range, and with ``--clock-control
none`` so that its durations are comparable with the event timings. The report
is exported as CSV by ``ncu -i`` and parsed by :mod:`forge_sandbox.ncu_metrics`;
the ``.ncu-rep`` file is kept for the user to open in Nsight Compute.

Profiling never changes a verdict's status: every failure (no ncu, no
permission for the counters, a timeout, no kernel matched) comes back as a
one-line reason that the verdict lists under "not measured".
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field

from forge_sandbox import ncu_metrics
from forge_sandbox.host import child_environment, kill_group_and_strays, read_tail
from forge_sandbox.kernel_names import ncu_name_regex

LAUNCH_COUNT = 10  # launches profiled at most: each costs dozens of replay passes
EXPORT_TIMEOUT_S = 120.0  # each `ncu -i` export, on top of the profile's own timeout
LOG_TAIL_BYTES = 200_000
PERMISSION_HINT = (
    "no permission for the GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or load the driver "
    "with NVreg_RestrictProfilingToAdminUsers=0"
)


@dataclass
class ProfileRequest:
    candidate: str
    init_inputs: str  # files the reference runner saved: the candidate is built and run on exactly these
    inputs: str
    init_seed: int
    kernel_names: list[str]  # the names the candidate's source defines; only these kernels are profiled
    workdir: str
    device: str = "cuda"
    report_dir: str | None = None  # where the .ncu-rep is kept; None keeps it under the system's temp dir
    report_name: str = "candidate"
    timeout: float = 240.0  # the profiled run; the exports have their own
    # The target in the candidate's namespaces (isolation.py): the unshare prefix, and the target's
    # --layout argument (isolation.layout). Off by default until shown to work under ncu on a GPU (ncu's
    # injected library talks to the ncu process, and counters kept for admins are out of a namespace's reach).
    isolation_prefix: list[str] = field(default_factory=list)
    target_args: list[str] = field(default_factory=list)
    env: dict = field(default_factory=dict)  # variables set for the target (its cache folders when isolated)


def find_ncu() -> str | None:
    """``FORGE_NCU``, then ``ncu`` on the PATH, then the usual install folders."""
    explicit = os.environ.get("FORGE_NCU")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in (
        "/usr/local/cuda/bin/ncu",
        "/opt/nvidia/nsight-compute/*/ncu",
        "/usr/local/NVIDIA-Nsight-Compute*/ncu",
    ):
        hits = sorted(glob.glob(pattern))
        if hits and os.access(hits[-1], os.X_OK):
            return hits[-1]
    return None


def kernel_filter(names: list[str]) -> list[str]:
    """ncu's ``-k`` option matching exactly the candidate's kernel names (function base names)."""
    names = sorted({n for n in names if re.fullmatch(r"[A-Za-z_]\w*", n or "")})
    return ["--kernel-name-base", "function", "-k", "regex:" + ncu_name_regex(names)] if names else []


def profile_command(ncu: str, report_base: str, request: ProfileRequest, extra_metrics: bool = True) -> list[str]:
    # ncu's own messages go to a file of their own: the candidate's output cannot pose as them.
    cmd = [ncu, "--log-file", report_base + ".log"]
    cmd += ["--profile-from-start", "off", "--clock-control", "none", "--launch-count", str(LAUNCH_COUNT)]
    cmd += kernel_filter(request.kernel_names)
    for section in ncu_metrics.SECTIONS:
        cmd += ["--section", section]
    if extra_metrics:
        cmd += ["--metrics", ",".join(ncu_metrics.EXTRA_METRICS)]
    if request.isolation_prefix:  # the application is unshare; the target is its grandchild
        cmd += ["--target-processes", "all"]
    cmd += ["-f", "-o", report_base, *request.isolation_prefix]
    cmd += [sys.executable, "-m", "forge_sandbox.profile_target", "--candidate", request.candidate]
    cmd += request.target_args
    cmd += ["--init-inputs", request.init_inputs, "--inputs", request.inputs]
    cmd += ["--init-seed", str(request.init_seed), "--device", request.device]
    return cmd


def profile(request: ProfileRequest) -> dict:
    """Profile the candidate's kernels; {"kernels": [...], "report": path, "seconds": s, ...} or {"error": why}."""
    started = time.perf_counter()
    ncu = find_ncu()
    if ncu is None:
        return {"error": "ncu not found (install Nsight Compute, put ncu on the PATH or set FORGE_NCU)"}
    if not request.kernel_names:
        return {"error": "the candidate's source names no kernel to profile (ncu would see PyTorch's too)"}
    os.makedirs(request.workdir, exist_ok=True)
    base = os.path.join(request.workdir, "profile")
    deadline = started + request.timeout
    messages = app_output = ""
    for extra_metrics in (True, False):
        code, messages, app_output = _run(profile_command(ncu, base, request, extra_metrics), request, deadline)
        if code == "timeout":
            return {"error": f"Nsight Compute took longer than {request.timeout:.0f} s and was killed"}
        if "ERR_NVGPUCTRPERM" in messages:
            return {"error": PERMISSION_HINT}
        if os.path.exists(base + ".ncu-rep") or not (extra_metrics and _unknown_metric(messages)):
            break
    report = base + ".ncu-rep"
    if not os.path.exists(report):
        if "no kernels were profiled" in messages.lower():
            names = ", ".join(request.kernel_names)
            return {"error": f"ncu saw no launch of the candidate's kernels ({names}) in one forward pass"}
        last = [line.strip() for line in app_output.splitlines() if line.strip()][-1:]
        return {
            "error": f"ncu failed (exit {code}): {_error_line(messages)}"
            + (f"; last output: {last[0][:200]}" if last else "")
        }
    try:
        raw = _export(ncu, report, "raw")
        details = _export(ncu, report, "details")
        kernels = ncu_metrics.summarize(raw, details, request.kernel_names)
        profiled = len(ncu_metrics.parse_raw(raw))
    except (ncu_metrics.NcuFormatError, RuntimeError, ValueError) as exc:
        return {"error": f"could not read ncu's report: {exc}"}
    if not kernels:
        return {"error": "ncu's report holds none of the candidate's kernels"}
    result = {
        "kernels": kernels,
        "dram_bytes": ncu_metrics.dram_bytes(kernels),
        # Fewer launches than the cap: every launch of the forward pass that matched was profiled.
        "all_launches": profiled < LAUNCH_COUNT,
        "version": ncu_version(ncu),
        "clock_control": "none",
        "isolated": bool(request.isolation_prefix),
    }
    try:
        result["report"] = _keep(report, request)
    except OSError as exc:
        result["report"] = None
        result["report_error"] = f"the .ncu-rep could not be kept: {exc.strerror or exc}"
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


def _run(cmd: list[str], request: ProfileRequest, deadline: float) -> tuple[int | str, str, str]:
    """Run ncu on the target; (exit code or "timeout", ncu's messages, the application's output)."""
    token = uuid.uuid4().hex
    app_log = os.path.join(request.workdir, "target.log")
    messages_log = cmd[cmd.index("--log-file") + 1]
    for path in (app_log, messages_log):
        if os.path.lexists(path):  # a link left by the target of a first attempt too
            os.unlink(path)
    with os.fdopen(os.open(app_log, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644), "wb") as log:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=request.workdir,
            env=child_environment(request.device, token, request.env, importable=True),
            start_new_session=True,
        )
        try:
            code: int | str = proc.wait(max(1.0, deadline - time.perf_counter()))
        except subprocess.TimeoutExpired:
            code = "timeout"
        kill_group_and_strays(proc.pid, token)  # whatever the target left running
        proc.wait()
    return code, _tail(messages_log), _tail(app_log)


def _tail(path: str) -> str:
    return read_tail(path, LOG_TAIL_BYTES)  # the isolated target can write in this folder


def _export(ncu: str, report: str, page: str) -> str:
    cmd = [ncu, "-i", report, "--page", page, "--csv", "--print-units", "base", "--print-kernel-base", "function"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=EXPORT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"exporting the {page} page took longer than {EXPORT_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        raise RuntimeError(f"exporting the {page} page failed: {_error_line(done.stdout + done.stderr)}")
    return done.stdout


def _keep(report: str, request: ProfileRequest) -> str:
    folder = request.report_dir or os.path.join(os.environ.get("TMPDIR", "/tmp"), "forge-profiles")
    os.makedirs(folder, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = os.path.join(folder, f"{request.report_name}-{stamp}-{uuid.uuid4().hex[:6]}.ncu-rep")
    shutil.copyfile(report, target)
    return target


def ncu_version(ncu: str) -> str | None:
    try:
        text = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"Version\s+(\S+)", text)
    return m.group(1) if m else None


def _unknown_metric(output: str) -> bool:
    low = output.lower()
    return "metric" in low and ("failed to find" in low or "not found" in low or "invalid" in low)


def _error_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("==ERROR==")]
    return ((errors or lines or ["no output"])[-1])[:300]
