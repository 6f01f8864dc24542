"""Nsight Compute: the CSV parser on fixtures, and the profiling step against a stand-in ncu.

Imports only forge_sandbox at the top, so that the GPU machine (no control-side
packages) runs the gpu-marked test here.

The stand-in (tests/fake_ncu.py) is a real executable: forge starts it, waits for
it, kills it and reads its output as it would the real ncu, and it runs the
profile target for real, so the candidate is built and run on the CPU.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import time

import pytest

from conftest import CANDIDATES, TASKS, TESTS, cpu_eval, gpu_eval
from forge_sandbox import hardware, ncu, ncu_metrics, protocol, taskfile
from forge_sandbox.kernel_names import is_own_kernel, ncu_name_regex

FIXTURES = TESTS / "fixtures" / "ncu"
SETS = sorted(p.parent for p in FIXTURES.rglob("raw.csv"))
SYNTHETIC = FIXTURES / "synthetic"


def _read(folder, name):
    path = folder / name
    return path.read_text() if path.exists() else None


def _names(folder) -> list[str]:
    return (_read(folder, "kernel_names.txt") or "").split()


# -- the parser -----------------------------------------------------------------------------


@pytest.mark.parametrize("folder", SETS, ids=[str(s.relative_to(FIXTURES)) for s in SETS])
def test_every_fixture_gives_the_judge_its_fields(folder):
    records = ncu_metrics.summarize(_read(folder, "raw.csv"), _read(folder, "details.csv"), _names(folder))
    assert records
    for r in records:
        if _names(folder):
            assert any(name in r["kernel"] for name in _names(folder))
        assert r["duration_ns"] > 0
        assert 0 <= r["sm_throughput_pct"] <= 101 and 0 <= r["memory_throughput_pct"] <= 101
        assert 0 < r["achieved_occupancy_pct"] <= 101
        assert r["theoretical_occupancy_pct"] + 1 >= r["achieved_occupancy_pct"]
        assert r["registers_per_thread"] > 0
        assert r["occupancy_limiter"] in r["occupancy_limits"]
        assert r["dram_read_bytes"] >= 0 and 0 <= r["l2_hit_pct"] <= 100
    lines = ncu_metrics.describe({"kernels": records})
    assert lines[0].startswith(f"ncu {records[0]['kernel']} (grid ")


def test_synthetic_report_read_exactly():
    records = ncu_metrics.summarize(_read(SYNTHETIC, "raw.csv"), _read(SYNTHETIC, "details.csv"), ["scale_add_kernel"])
    assert [r["kernel"] for r in records] == ["scale_add_kernel"]  # PyTorch's kernel is dropped
    (r,) = records
    assert r["launches"] == 2 and r["duration_ns"] == 70112  # the longer of two launches; "70,112" read
    assert r["dram_read_bytes"] == 134217728 and r["smem_per_block_bytes"] == 0
    assert r["occupancy_limiter"] == "registers" and r["occupancy_limits"]["blocks"] == 32
    assert r["top_stalls"] == [["long_scoreboard", 38.75], ["lg_throttle", 2.92], ["wait", 1.53]]  # not "selected"
    assert r["tensor_pipe_pct"] == 0
    rules = r["rules"]
    # No INF rule; one entry per rule (its largest gain); estimates first, whole-kernel ones before local.
    assert [x["rule"] for x in rules] == ["MemoryCacheAccessPattern", "AchievedOccupancy", "CPIStall"]
    assert rules[0]["speedup_pct"] == 21.9 and rules[0]["speedup_type"] == "global"
    assert "  " not in rules[0]["text"]
    assert ncu_metrics.dram_bytes(records) == 2 * (134217728 + 67108864)
    text = "\n".join(ncu_metrics.describe({"kernels": records}))
    assert "occupancy 81% achieved of 100% theoretical (limited by registers)" in text
    assert "ncu advice [OPT, est. 21.9% global] MemoryCacheAccessPattern" in text
    assert "Foreign kernel advice" not in text


def test_units_are_read_into_nanoseconds_and_bytes_or_dropped():
    raw = (
        '"ID","Kernel Name","gpu__time_duration.sum","dram__bytes_read.sum","dram__bytes_write.sum",'
        '"launch__registers_per_thread"\n'
        '"","","us","Mbyte","furlong","register/thread"\n'
        '"0","k","1.5","2","7","32"'  # a short row (no trailing fields) is padded, not dropped
        "\n"
    )
    (launch,) = ncu_metrics.parse_raw(raw)
    record = ncu_metrics.summarize_launch(launch, [])
    assert record["duration_ns"] == 1500.0 and record["dram_read_bytes"] == 2e6
    assert "dram_write_bytes" not in record  # a unit it does not know is never guessed
    assert record["registers_per_thread"] == 32
    short = raw.replace(',"32"', "")
    assert ncu_metrics.parse_raw(short)[0]["metrics"]["gpu__time_duration.sum"] == 1.5


def test_own_kernels_are_matched_by_exact_function_name():
    assert is_own_kernel("void ns::k<float, 4>(float*, int)", ["k"])
    assert is_own_kernel("k_0d1d2de", ["k"])  # Triton < 3.0's specialization suffix
    assert not is_own_kernel("vectorized_layer_norm_kernel", ["layer_norm_kernel"])
    assert not is_own_kernel("gemm_128x128", ["gemm"])
    pattern = re.compile(ncu_name_regex(["a", "b"]))
    assert pattern.search("a") and pattern.search("ns::b") and pattern.search("a_0d1de")
    assert not pattern.search("xa") and not pattern.search("a_kernel")


def test_numbers_and_pages_it_does_not_know():
    assert ncu_metrics.number("1,234.5") == 1234.5 and ncu_metrics.number("n/a") is None
    assert ncu_metrics.number("nan") is None and ncu_metrics.number("inf") is None
    with pytest.raises(ncu_metrics.NcuFormatError):
        ncu_metrics.parse_raw("==ERROR== something went wrong\n")
    assert ncu_metrics.parse_rules('"ID","Kernel Name","Section Name","Metric Name"\n"0","k","s","m"\n') == {}


def test_the_judge_and_forge_show_get_the_ncu_lines():
    records = ncu_metrics.summarize(_read(SYNTHETIC, "raw.csv"), _read(SYNTHETIC, "details.csv"), ["scale_add_kernel"])
    lines = hardware.describe({"ncu": {"kernels": records}, "not_measured": []})
    assert any(line.startswith("ncu scale_add_kernel") for line in lines)
    assert any(line.startswith("ncu advice [") for line in lines)


# -- profiling with a stand-in ncu ----------------------------------------------------------


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    """The stand-in ncu, configured through a file beside it (its environment is the runners' kept one,
    which carries no test variables)."""
    script = tmp_path / "bin" / "ncu"
    script.parent.mkdir()
    log = tmp_path / "ncu-calls.jsonl"
    config = tmp_path / "bin" / "ncu.json"
    config.write_text(json.dumps({"FAKE_NCU_LOG": str(log), "FAKE_NCU_FIXTURE": str(SYNTHETIC)}))
    script.write_text(
        f"#!{sys.executable}\nimport json, os, runpy, sys\n"
        f"os.environ.update(json.load(open({str(config)!r})))\n"
        f"sys.argv[0] = {str(TESTS / 'fake_ncu.py')!r}\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("FORGE_NCU", str(script))
    return log


def _mode(log, mode: str) -> None:
    """Pick the stand-in ncu's behaviour (fake_ncu.py)."""
    config = log.parent / "bin" / "ncu.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "FAKE_NCU_MODE": mode}))


def _calls(log) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _request(tmp_path, candidate="honest_triton", names=("scale_add_kernel",), timeout=120.0) -> ncu.ProfileRequest:
    task = taskfile.load_task(str(TASKS / "scale_add.py"), {"n": 4096})
    protocol.save_tensors(str(tmp_path / "init.pt"), task.get_init_inputs())
    protocol.save_tensors(str(tmp_path / "inputs.pt"), [task.get_inputs()])
    return ncu.ProfileRequest(
        candidate=str(CANDIDATES / f"{candidate}.py"),
        init_inputs=str(tmp_path / "init.pt"),
        inputs=str(tmp_path / "inputs.pt"),
        init_seed=1,
        kernel_names=list(names),
        workdir=str(tmp_path / "work"),
        device="cpu",
        report_dir=str(tmp_path / "reports"),
        report_name="honest",
        timeout=timeout,
    )


def test_profile_runs_ncu_on_the_candidates_kernels_only(tmp_path, fake_ncu):
    result = ncu.profile(_request(tmp_path))
    assert "error" not in result, result
    assert [k["kernel"] for k in result["kernels"]] == ["scale_add_kernel"]
    assert result["version"] == "2099.1.0.0" and result["seconds"] > 0 and result["clock_control"] == "none"
    assert os.path.dirname(result["report"]) == str(tmp_path / "reports") and os.path.exists(result["report"])
    calls = _calls(fake_ncu)
    run = next(c for c in calls if "-o" in c)
    flags = " ".join(run[: run.index("-o")])
    assert "--clock-control none" in flags and "--profile-from-start off" in flags
    assert f"--kernel-name-base function -k regex:{ncu_name_regex(['scale_add_kernel'])}" in flags
    assert run[0:2] == ["--log-file", str(tmp_path / "work" / "profile.log")]
    assert all(f"--section {s}" in flags for s in ncu_metrics.SECTIONS)
    assert run[run.index("-o") + 2 :][:3] == [sys.executable, "-m", "forge_sandbox.profile_target"]
    pages = [c[c.index("--page") + 1] for c in calls if "-i" in c]
    assert pages == ["raw", "details"]
    assert all("--print-units" in c and "base" in c for c in calls if "-i" in c)


def test_counters_without_permission_say_so(tmp_path, fake_ncu, monkeypatch):
    _mode(fake_ncu, "perm")
    assert ncu.profile(_request(tmp_path)) == {"error": ncu.PERMISSION_HINT}


def test_no_kernel_profiled_says_which_names_were_looked_for(tmp_path, fake_ncu, monkeypatch):
    _mode(fake_ncu, "nokernels")
    error = ncu.profile(_request(tmp_path))["error"]
    assert "no launch of the candidate's kernels (scale_add_kernel)" in error


def test_an_unknown_metric_is_retried_with_the_sections_alone(tmp_path, fake_ncu, monkeypatch):
    _mode(fake_ncu, "badmetric")
    result = ncu.profile(_request(tmp_path))
    assert result.get("kernels"), result
    runs = [c for c in _calls(fake_ncu) if "-o" in c]
    assert len(runs) == 2 and "--metrics" in runs[0] and "--metrics" not in runs[1]


def test_a_candidate_failing_under_the_profiler_is_one_line(tmp_path, fake_ncu):
    error = ncu.profile(_request(tmp_path, candidate="bad_raises"))["error"]
    assert error.startswith("ncu failed (exit 1): ==ERROR== The application returned an error code (1)")


def test_a_hanging_profiler_is_killed(tmp_path, fake_ncu, monkeypatch):
    _mode(fake_ncu, "hang")
    started = time.monotonic()
    error = ncu.profile(_request(tmp_path, timeout=3.0))["error"]
    assert "longer than 3 s" in error and time.monotonic() - started < 30
    pid = int((tmp_path / "ncu-calls.jsonl.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_without_ncu_or_kernel_names_there_is_a_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("FORGE_NCU", str(tmp_path / "missing" / "ncu"))
    assert "ncu not found" in ncu.profile(_request(tmp_path))["error"]
    monkeypatch.setenv("FORGE_NCU", sys.executable)
    assert "names no kernel" in ncu.profile(_request(tmp_path, names=()))["error"]


# -- in the evaluation ----------------------------------------------------------------------


def test_an_evaluation_says_why_there_are_no_ncu_metrics():
    asked = cpu_eval("honest_triton", profile=True)
    assert asked.passed
    assert "Nsight Compute metrics: CPU device" in asked.hardware["not_measured"]
    plain = cpu_eval("honest_triton")
    assert any("not requested" in item for item in plain.hardware["not_measured"])
    assert plain.hardware["roofline"]["bytes_source"] == "declared by the task"


def test_forge_eval_profile_on_the_cpu_prints_what_was_not_measured():
    from click.testing import CliRunner  # the control side: the GPU image runs this file without it

    from forge.cli import main

    result = CliRunner().invoke(
        main,
        ["eval", str(TASKS / "scale_add.py"), str(CANDIDATES / "honest_triton.py"), "--device", "cpu", "--profile"],
    )
    assert result.exit_code == 0, result.output
    assert "not measured: Nsight Compute metrics: CPU device" in result.output


@pytest.mark.gpu
def test_profile_on_a_gpu_measures_the_candidates_kernel_only(tmp_path):
    if ncu.find_ncu() is None:
        pytest.skip("ncu is not installed on this GPU machine")
    verdict = gpu_eval("honest_triton", profile=True, profile_dir=str(tmp_path))
    assert verdict.passed, verdict.reasons
    profile = verdict.hardware.get("ncu")
    assert profile, verdict.hardware["not_measured"]
    assert [k["kernel"] for k in profile["kernels"]] == ["scale_add_kernel"]
    assert profile["kernels"][0]["duration_ns"] > 0 and os.path.exists(profile["report"])


def test_forge_eval_prints_the_profile_and_where_the_report_is():
    from rich.console import Console

    from forge.render import print_verdict
    from forge_sandbox import Verdict

    records = ncu_metrics.summarize(_read(SYNTHETIC, "raw.csv"), _read(SYNTHETIC, "details.csv"), ["scale_add_kernel"])
    profile = {"kernels": records, "report": "/tmp/r.ncu-rep", "seconds": 12.5, "version": "2099.1"}
    verdict = Verdict(status="passed", candidate_ms=0.07, reference_ms=0.2, speedup=2.86, hardware={"ncu": profile})
    console = Console(record=True, width=300)
    print_verdict(console, verdict)
    text = console.export_text()
    assert "ncu scale_add_kernel (grid (16384, 1, 1) block (1024, 1, 1), 2 launches): 70.11 us" in text
    assert "Nsight Compute 2099.1 took 12.5 s; report: /tmp/r.ncu-rep" in text


def test_a_report_that_cannot_be_kept_loses_nothing_else(tmp_path, fake_ncu):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    request = _request(tmp_path)
    request.report_dir = str(blocker / "reports")
    result = ncu.profile(request)
    assert result["kernels"] and result["report"] is None and "could not be kept" in result["report_error"]


def test_a_failure_inside_profiling_never_ends_an_evaluation(tmp_path):
    from types import SimpleNamespace

    import torch

    from forge_sandbox import EvalOptions, Verdict, evidence

    sides = SimpleNamespace(workdir=str(tmp_path), candidate_copy=str(tmp_path / "c.py"), caches={})
    timed = evidence.TimedShape(setup={}, init_seed=1, output_dtype=torch.float32, output_bytes=4, overrides={})
    verdict, missing = Verdict(status="passed"), []  # no saved inputs in ``setup``: a KeyError inside
    evidence._nsight_compute(sides, verdict, EvalOptions(device="cuda", profile=True), timed, ["k"], missing)
    assert "ncu" not in verdict.hardware
    assert missing[0].startswith("Nsight Compute metrics: profiling failed inside forge (")


def test_the_profiled_target_can_run_in_the_candidates_namespaces(tmp_path, fake_ncu):
    from forge_sandbox import isolation

    prefix, why_not = isolation.isolation_prefix()
    if why_not:
        pytest.skip(why_not)
    request = _request(tmp_path)
    inputs = tmp_path / "inputs"  # read-only inside; a folder above its own writable one would be left out
    inputs.mkdir()
    for name in ("init.pt", "inputs.pt"):
        (tmp_path / name).rename(inputs / name)
    request.init_inputs, request.inputs = str(inputs / "init.pt"), str(inputs / "inputs.pt")
    caches = isolation.cache_environment("test-profile-target")
    work = tmp_path / "work"
    work.mkdir()
    layout = isolation.layout(str(work), [str(inputs), str(CANDIDATES)], caches)
    request.isolation_prefix, request.env = prefix, caches
    request.target_args = ["--layout", json.dumps(layout)]
    result = ncu.profile(request)
    assert result.get("isolated") is True, result
    run = next(c for c in _calls(fake_ncu) if "-o" in c)
    assert "--target-processes" in run and run[run.index("-o") + 2 :][: len(prefix)] == prefix
    assert "forge profile target: read-only except" in (tmp_path / "work" / "target.log").read_text()
