"""Every known way to fake a kernel benchmark has a fixture, and none of them passes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import CANDIDATES, TASKS, cpu_eval, gpu_eval

# fixture -> the statuses that are an acceptable rejection of it (never "passed")
CHEATS = {
    "cheat_output_cache_pointer": {"incorrect"},
    "cheat_output_cache_value": {"incorrect", "rejected"},
    "cheat_input_mutation": {"rejected"},
    "cheat_lazy_subclass": {"rejected", "incorrect"},
    "cheat_background_thread": {"rejected"},
    "cheat_side_stream": {"rejected"},
    "cheat_timer_patch": {"rejected"},
    "cheat_hidden_clock": {"rejected"},
    "cheat_compare_patch": {"rejected", "incorrect"},
    "cheat_reference_memory": {"rejected", "incorrect"},
    "cheat_empty_output": {"incorrect"},
    "cheat_read_expected_file": {"rejected", "incorrect"},
    "cheat_phase_switch": {"incorrect"},
    "cheat_forged_stdout": {"crashed"},
    "cheat_forged_reply": {"rejected", "incorrect"},
    "cheat_precision_downgrade": {"incorrect"},
    "cheat_precision_cast_back": {"incorrect"},
    "cheat_pytorch_fallback": {"rejected"},
    "cheat_pytorch_only": {"rejected"},
    "cheat_unused_kernel": {"rejected"},
    "cheat_zeros": {"incorrect"},
    # these reach into the runner itself; the static check stops them first
    "cheat_zero_times": {"rejected"},
    "cheat_median_game": {"rejected"},
    "cheat_fifo_output": {"rejected"},
    "cheat_deep_json": {"rejected"},
    "cheat_payload_announce": {"rejected"},
    "cheat_command_pipe_flood": {"rejected"},
    "cheat_suppress_fallback": {"rejected"},
    "cheat_kill_reference": {"rejected"},
    "cheat_network_lookup": {"rejected"},
    "cheat_unix_socket": {"rejected"},
}

# With the static checks off, the runtime and host-side defenses alone must still hold.
# (Side streams need a GPU to show; see the gpu tests below.)
RUNTIME_ONLY = {
    "cheat_background_thread": "thread",
    "cheat_timer_patch": "timing primitives were replaced",
    "cheat_hidden_clock": "do not add up",
    "cheat_lazy_subclass": "not a plain torch.Tensor",
    "cheat_compare_patch": "outside tolerance",
    "cheat_reference_memory": "outside tolerance",
    "cheat_pytorch_fallback": "no custom kernel was launched",
    "cheat_forged_reply": "",
    "cheat_read_expected_file": "outside tolerance",
    "cheat_zero_times": "not physical",
    "cheat_median_game": "skewed",
    "cheat_fifo_output": "not a regular file",
    "cheat_deep_json": "malformed message",
    "cheat_payload_announce": "only the reference may send",
    "cheat_command_pipe_flood": "stopped reading its commands",
    "cheat_suppress_fallback": "no custom kernel was launched",
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheat_never_passes(name):
    verdict = cpu_eval(name)
    assert verdict.status in CHEATS[name], (verdict.status, verdict.reasons)
    assert verdict.speedup is None
    assert verdict.reasons, "a rejection must say why"


@pytest.mark.parametrize("name", sorted(RUNTIME_ONLY))
def test_runtime_defenses_hold_without_static_checks(name):
    verdict = cpu_eval(name, static_checks=False)
    assert verdict.status != "passed", verdict.reasons
    assert RUNTIME_ONLY[name] in " ".join(verdict.reasons)


def _isolated(verdict) -> bool:
    return not verdict.environment.get("isolation", "none").startswith("none")


def test_in_its_namespaces_the_candidate_finds_no_forge_process_to_kill():
    verdict = cpu_eval("cheat_kill_reference", static_checks=False)
    if not _isolated(verdict):
        pytest.skip(f"no namespace isolation here: {verdict.environment.get('isolation')}")
    # It found no reference in its /proc, so its (honest) kernel is all that is left.
    assert verdict.passed, verdict.reasons


def test_without_isolation_a_killed_reference_is_never_blamed_on_the_task():
    verdict = cpu_eval("cheat_kill_reference", static_checks=False, isolate=False)
    assert verdict.status == "crashed" and "the reference process failed" in verdict.reasons[0]
    assert verdict.environment["isolation"] == "none: turned off"


def test_in_its_namespaces_the_candidate_reaches_no_network(monkeypatch):
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)
    monkeypatch.setenv("FORGE_TEST_LISTENER_PORT", str(listener.getsockname()[1]))
    connections = []
    threading.Thread(target=lambda: connections.append(listener.accept()), daemon=True).start()
    try:
        verdict = cpu_eval("cheat_network_lookup", static_checks=False)
        if not _isolated(verdict):
            pytest.skip(f"no namespace isolation here: {verdict.environment.get('isolation')}")
        assert verdict.status == "runtime_error" and "while loading" in verdict.reasons[0], verdict.reasons
        assert not connections
        # The same candidate without the namespaces does connect: the test can see a connection.
        cpu_eval("cheat_network_lookup", static_checks=False, isolate=False)
        assert connections
    finally:
        listener.close()


def test_in_its_namespaces_the_candidate_cannot_rewrite_what_later_verdicts_trust(tmp_path, monkeypatch):
    import torch

    probe = os.path.join(os.path.dirname(torch.__file__), "forge_tamper_probe.txt")
    monkeypatch.setenv("FORGE_TEST_TAMPER_TORCH", "1")  # torch's own package folder
    try:
        verdict = cpu_eval("cheat_tamper_files", static_checks=False)
        if not verdict.environment.get("files", "").startswith("read-only"):
            pytest.skip(f"no read-only mounts here: {verdict.environment.get('files')}")
        assert verdict.status == "runtime_error" and "Read-only file system" in verdict.reasons[0], verdict.reasons
        assert not os.path.exists(probe)
    finally:
        if os.path.exists(probe):
            os.unlink(probe)
    # A store under /tmp: inside, /tmp is a private tmpfs, so the folder is not even there.
    store = tmp_path / "forge-store"
    store.mkdir()
    monkeypatch.setenv("FORGE_TEST_TAMPER_TORCH", "0")
    monkeypatch.setenv("FORGE_TEST_TARGET_DIR", str(store))
    verdict = cpu_eval("cheat_tamper_files", static_checks=False)
    assert verdict.status == "runtime_error" and not (store / "forge_tamper_probe.txt").exists()
    # Without the namespaces the same write lands (in the test's folder only: torch is left alone).
    cpu_eval("cheat_tamper_files", static_checks=False, isolate=False)
    assert (store / "forge_tamper_probe.txt").exists()


def test_in_its_namespaces_the_candidate_reaches_no_socket_file(tmp_path, monkeypatch):
    import socket
    import threading

    # A socket file where the candidate can see it (read-only): the home folder's cache, not /tmp.
    folder = tempfile.mkdtemp(prefix="forge-test-socket-", dir=os.path.expanduser("~"))
    path = os.path.join(folder, "s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen()
    listener.settimeout(60)
    monkeypatch.setenv("FORGE_TEST_SOCKET", path)
    connections = []
    threading.Thread(target=lambda: connections.append(listener.accept()), daemon=True).start()
    try:
        verdict = cpu_eval("cheat_unix_socket", static_checks=False)
        if not _isolated(verdict) or "socket files stay reachable" in verdict.environment.get("files", ""):
            pytest.skip(f"no socket filter here: {verdict.environment}")
        assert verdict.status == "runtime_error" and "Operation not permitted" in verdict.reasons[0], verdict.reasons
        assert not connections
        cpu_eval("cheat_unix_socket", static_checks=False, isolate=False)
        assert connections  # without the namespaces the same code gets through: the test can see it
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("isolate", [True, False])
def test_a_log_swapped_for_a_fifo_does_not_hang_the_host(isolate):
    verdict = cpu_eval("cheat_log_fifo", static_checks=False, isolate=isolate, timeout=30.0)
    assert verdict.status == "runtime_error" and "now read my log" in verdict.reasons[0], verdict.reasons
    assert verdict.duration_s < 30


def test_the_seccomp_filter_refuses_local_sockets_and_io_uring():
    script = """
import ctypes, errno, socket
from forge_sandbox import isolation
isolation.deny_local_sockets()
libc = ctypes.CDLL(None, use_errno=True)
results = []
for family in (socket.AF_UNIX, socket.AF_VSOCK):
    try:
        socket.socket(family, socket.SOCK_STREAM)
        results.append("created")
    except OSError as exc:
        results.append(errno.errorcode[exc.errno])
params = ctypes.create_string_buffer(120)
results.append("io_uring " + ("refused" if libc.syscall(425, 8, params) == -1 and ctypes.get_errno() == errno.EPERM else "open"))
socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
print(" ".join(results))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["EPERM", "EPERM", "io_uring", "refused"]


def test_recognizing_a_known_input_set_in_a_new_layout_is_caught():
    # Timed inputs are rolled *and* jittered, so no two calls share values: a cache that
    # recognizes a pool entry under a roll (exactly or nearly) returns a stale output,
    # which the checksum of every timed output exposes.
    verdict = cpu_eval("cheat_pool_layout_cache", task="linear_relu")
    assert verdict.status == "incorrect", verdict.reasons
    assert "timed call" in verdict.reasons[0]


def test_a_crash_is_seen_at_once_even_when_a_child_keeps_the_pipe_open():
    verdict = cpu_eval("bad_crash_with_child", static_checks=False, timeout=120.0)
    assert verdict.status == "crashed", verdict.reasons
    assert verdict.duration_s < 60


def test_rewriting_the_task_file_does_not_change_the_reference(tmp_path):
    # The candidate runs with the host's file rights and rewrites the task on disk (the damage
    # stays, so a copy is used); the evaluation already holds the task's source. Without its
    # namespaces, so that it can find the host's command line (in them it cannot: below).
    task = tmp_path / "scale_add.py"
    shutil.copy(TASKS / "scale_add.py", task)
    cmd = [sys.executable, "-m", "forge_sandbox", "eval", str(task), str(CANDIDATES / "cheat_rewrite_task.py")]
    out = subprocess.run(cmd + ["--device", "cpu", "--no-isolate"], capture_output=True, text=True, timeout=300)
    verdict = json.loads(out.stdout)
    assert "time.sleep" in task.read_text(), "the fixture did rewrite the file"
    assert verdict["status"] != "passed" or verdict["speedup"] < 1.0, verdict


def test_static_check_names_the_trick():
    verdict = cpu_eval("cheat_pytorch_only")
    assert verdict.reasons[0].startswith("no custom kernel")


def test_forged_stdout_verdict_is_ignored():
    verdict = cpu_eval("cheat_forged_stdout")
    assert verdict.status == "crashed"
    # what it printed is kept as a log line for people, never read as a result
    assert '"status": "passed"' in verdict.log_tail


def test_honest_candidates_pass():
    verdict = cpu_eval("honest_triton")
    assert verdict.status == "passed", verdict.reasons
    assert verdict.speedup and verdict.speedup > 0


# ---- tricks that only a GPU can show -------------------------------------------------


@pytest.mark.gpu
def test_gpu_side_stream_gains_nothing_without_static_checks():
    # The static check rejects it outright; without that, the device-wide sync before
    # the end event still times the hidden work, so its 50 launches make it slow.
    assert gpu_eval("cheat_side_stream").status == "rejected"
    verdict = gpu_eval("cheat_side_stream", static_checks=False)
    assert verdict.status != "passed" or verdict.speedup < 1.0


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["cheat_output_cache_pointer", "cheat_empty_output", "cheat_phase_switch"])
def test_gpu_memory_and_caching_tricks(name):
    assert gpu_eval(name).status != "passed"


@pytest.mark.gpu
def test_gpu_honest_passes():
    verdict = gpu_eval("honest_triton")
    assert verdict.status == "passed", verdict.reasons
