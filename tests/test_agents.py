"""Prompt templates, answer parsing and the price table: the agents' pieces on their own."""

from __future__ import annotations

import json

import pytest

from forge.agents import OptimizeAdvice, RepairAdvice, extract_code, extract_json
from forge.llm import DEFAULT_PRICES, price_for, price_table
from forge.prompts import PromptError, Template, backend_rules, load_templates


def test_bundled_templates_load_and_render():
    templates = load_templates()
    messages = templates["coder"].render(task_source="T", device_facts="D", backend_rules="B", history="H")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "{{" not in messages[1]["content"] and "T" in messages[1]["content"]
    for backend in ("triton", "cuda", "cupy"):
        assert backend_rules(backend)


def test_a_template_missing_a_placeholder_fails_at_load_time():
    with pytest.raises(PromptError, match="missing placeholder"):
        Template("judge_repair", "system\n=== user ===\n{{task_source}} {{candidate_source}} {{device_facts}}")


def test_a_template_with_an_unknown_placeholder_fails_at_load_time():
    text = "s\n=== user ===\n{{task_source}} {{candidate_source}} {{device_facts}} {{error}} {{typo}}"
    with pytest.raises(PromptError, match="unknown placeholder"):
        Template("judge_repair", text)


def test_code_extraction_takes_the_block_that_defines_modelnew():
    text = "Plan:\n```python\nprint('scratch')\n```\nFinal:\n```python\nclass ModelNew:\n    pass\n```\n"
    assert extract_code(text) == "class ModelNew:\n    pass\n"
    assert extract_code("no code here") is None
    assert extract_code("```python\nx = 1\n```") is None


def test_json_extraction_validates_against_the_schema():
    advice = {"critical_issue": "a", "fix_hint": "b"}
    assert extract_json("```json\n" + json.dumps(advice) + "\n```", RepairAdvice).fix_hint == "b"
    assert extract_json("Sure! " + json.dumps(advice) + " Hope it helps.", RepairAdvice).critical_issue == "a"
    assert extract_json(json.dumps(advice), OptimizeAdvice) is None  # wrong fields
    assert extract_json("{not json", RepairAdvice) is None


def test_prices_match_snapshots_and_unknown_models_have_no_price(forge_home):
    assert price_for("gpt-4o-2024-08-06", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o"]
    assert price_for("gpt-4o-mini-2024-07-18", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o-mini"]
    assert price_for("llama-3-70b", DEFAULT_PRICES) is None
    forge_home.mkdir(parents=True, exist_ok=True)
    (forge_home / "prices.json").write_text(json.dumps({"llama-3-70b": [0.5, 1.5]}))
    assert price_for("llama-3-70b", price_table()) == (0.5, 1.5)


def test_code_extraction_pairs_fences_with_any_language_tag():
    text = (
        "The kernel:\n```cuda\n__global__ void k() {}\n```\nThe file:\n```python\nimport torch\n"
        "class ModelNew(torch.nn.Module):\n    pass\n```\nUse it:\n```python\nm = ModelNew()\n```\n"
    )
    assert extract_code(text) == "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"


def test_prefixes_are_not_prices():
    assert price_for("o3-pro", DEFAULT_PRICES) is None and price_for("gpt-5-nano", DEFAULT_PRICES) is None
    assert price_for("o3-2025-04-16", DEFAULT_PRICES) == DEFAULT_PRICES["o3"]


def test_export_names_are_identifiers():
    from forge_sandbox.taskfile import export_name

    assert export_name("1_Square_matrix_multiplication_") == "k_1_Square_matrix_multiplication"
    assert export_name("softmax_rows") == "softmax_rows" and export_name("class") == "k_class"
