"""Every verdict carries both baselines: eager PyTorch and the reference under torch.compile (cached)."""

from __future__ import annotations

import json

import pytest

from conftest import CANDIDATES, TASKS, cpu_eval


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FORGE_SANDBOX_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_verdict_carries_both_baselines_and_the_compiled_one_is_cached(fresh_cache):
    cold = cpu_eval("honest_triton")
    assert cold.status == "passed", cold.reasons
    eager, compiled = cold.baselines["eager"], cold.baselines["compile"]
    assert eager["ms"] == cold.reference_ms and eager["iqr_ms"] is not None
    assert compiled["ms"] > 0 and compiled["iqr_ms"] is not None and compiled["mode"] == "default"
    assert compiled["cached"] is False
    assert cold.speedup_vs_compile == pytest.approx(compiled["ms"] / cold.candidate_ms, rel=1e-3)
    assert len(list((fresh_cache / "baselines").glob("*.json"))) == 1
    warm = cpu_eval("honest_triton")
    assert warm.baselines["compile"]["cached"] is True
    assert warm.baselines["compile"]["cached_ms"] == compiled["ms"]
    # the record keeps the compiled reference's figure relative to the eager one beside it
    ratio = compiled["ms"] / eager["ms"]
    assert warm.baselines["compile"]["ms"] == pytest.approx(ratio * warm.reference_ms, rel=1e-3)
    assert warm.duration_s < cold.duration_s


def test_a_record_made_on_a_slowed_machine_does_not_carry_the_slowdown(fresh_cache):
    # Whatever slowed the evaluation that made the record (another job, a candidate's leftovers)
    # slowed both references, timed side by side: a 50x slower record changes nothing today.
    cold = cpu_eval("honest_triton")
    (record_path,) = (fresh_cache / "baselines").glob("*.json")
    record = json.loads(record_path.read_text())
    record_path.write_text(json.dumps({**record, "ms": 50 * record["ms"], "eager_ms": 50 * record["eager_ms"]}))
    warm = cpu_eval("honest_triton")
    assert warm.baselines["compile"]["cached"] is True
    assert warm.baselines["compile"]["ms"] < 5 * cold.baselines["compile"]["ms"], (warm.baselines, cold.baselines)


def test_a_reference_that_torch_compile_cannot_handle_gets_a_reason_not_a_failed_verdict(fresh_cache):
    verdict = cpu_eval("honest_triton", task="no_compile")
    assert verdict.status == "passed", verdict.reasons
    assert verdict.baselines["compile"]["ms"] is None
    assert "torch.compile failed" in verdict.baselines["compile"]["reason"]
    assert verdict.speedup_vs_compile is None and verdict.speedup > 0


def test_forge_eval_json_carries_both_baselines(fresh_cache):
    from click.testing import CliRunner

    from forge.cli import main

    args = ["eval", str(TASKS / "scale_add.py"), str(CANDIDATES / "honest_triton.py"), "--device", "cpu", "--json"]
    result = CliRunner().invoke(main, args)
    verdict = json.loads(result.stdout)
    assert verdict["status"] == "passed", verdict["reasons"]
    assert verdict["baselines"]["eager"]["ms"] > 0 and verdict["baselines"]["compile"]["ms"] > 0
    assert verdict["speedup_vs_compile"] > 0 and verdict["speedup"] > 0
