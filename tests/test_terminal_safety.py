"""A candidate or an LLM cannot paint the terminal: whatever text of theirs forge prints, its control
characters arrive as visible escapes (a red-team's exception message once repainted `forge eval` to show
"passed" over a runtime_error)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import TASKS
from fake_llm import FakeLLM, answer, judge_answer
from forge.cli import main
from forge.config import db_path
from forge.printable import printable, printable_data
from forge.store import Store

# What would reach a terminal: CSI (7-bit and the one-byte C1 form), OSC, a carriage return that overwrites
# the line, and a right-to-left override.
HIDDEN = ("\x1b", "\x9b", "\x07", "\r", "\u202e")

PAINTER = '''"""Clears the screen from its exception message and writes a verdict of its own."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# \x1b]0;forge: passed\x07 sets the window title when this file is printed raw


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * alpha + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, self.alpha, n, BLOCK=1024)
        raise RuntimeError("\\x1b[2J\\x1b[Hpassed  speedup 9.99x \\x9b2K\\u202eok\\r")
'''


def assert_nothing_hidden(text: str) -> None:
    shown = [char for char in HIDDEN if char in text]
    assert not shown, f"printed raw: {shown!r}"


def invoke(*args: str, code: int = 0):
    result = CliRunner().invoke(main, list(map(str, args)))
    assert result.exit_code == code, result.output
    assert_nothing_hidden(result.output)
    return result


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("\x1b[2J\x1b[Hpassed", "\\x1b[2J\\x1b[Hpassed"),
        ("\x9b2Kspeedup", "\\x9b2Kspeedup"),
        ("runtime_error\rpassed       ", "runtime_error\\x0dpassed       "),
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("abc\u202edcb", "abc\\u202edcb"),
        ("\u2066isolated\u2069", "\\u2066isolated\\u2069"),
        ("nul\x00del\x7f", "nul\\x00del\\x7f"),
        ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
        ("line\u2028separator", "line\\u2028separator"),
        ("lone \udcff surrogate", "lone \\udcff surrogate"),
        ("tag \U000e0041", "tag \\U000e0041"),
    ],
)
def test_control_and_invisible_characters_become_escapes(raw, shown):
    assert printable(raw) == shown
    assert printable(shown) == shown  # the same however often it is applied


@pytest.mark.parametrize(
    "text",
    [
        "def forward(self, x):\n\treturn x * 2  # [bold]not markup[/]\n",
        "café naïve Ångström — “quoted” …",
        "核函数 カーネル 커널 ядро",
        "fast 🚀, family 👨\u200d👩\u200d👧, Persian می\u200cخواهم",
        "C:\\path\\x1b is a path, not an escape",
        "",
    ],
)
def test_visible_text_is_unchanged(text):
    assert printable(text) == text


def test_nested_data_is_made_printable_keys_and_all():
    data = {"advice\x1b": ["\x1b[31m", ("\u202e", 3)], "n": 1.5, "none": None}
    assert printable_data(data) == {"advice\\x1b": ["\\x1b[31m", ("\\u202e", 3)], "n": 1.5, "none": None}


def test_eval_of_a_candidate_whose_error_repaints_the_screen_still_says_runtime_error(tmp_path):
    candidate = tmp_path / "painter.py"
    candidate.write_text(PAINTER)
    result = invoke("eval", TASKS / "scale_add.py", candidate, "--device", "cpu", code=1)
    first = result.output.splitlines()[0]
    assert first.startswith("runtime_error"), result.output
    assert "\\x1b[2J\\x1b[Hpassed" in result.output and "\\x9b2K\\u202eok" in result.output
    verdict = json.loads(invoke("eval", TASKS / "scale_add.py", candidate, "--device", "cpu", "--json", code=1).stdout)
    assert verdict["status"] == "runtime_error"  # --json escapes them too (ensure_ascii)


def test_optimize_show_logs_and_runs_print_the_agents_text_visibly():
    advice = {"critical_issue": "\x1b[2J\x1b[Hall good", "fix_hint": "\u202ereverse me\x9b31m"}
    coder = [answer(PAINTER.replace("\\x1b]0", "\x1b]0"), prose="\x1b[2JHere it is.")]
    with FakeLLM(coder=coder, judge=[judge_answer(advice)]) as server:
        args = ["optimize", TASKS / "scale_add.py", "--model", "gpt-4o-mini", "--base-url", server.base_url]
        run = invoke(*args, "--device", "cpu", "--rounds", "2", "--patience", "2", code=1)
    assert "runtime_error" in run.output and "no verified kernel" in run.output
    assert "\\u202ereverse me\\x9b31m" in run.output  # the judge's line in the progress

    story = invoke("show", "1").output
    assert "runtime_error" in story and "\\x1b]0;forge: passed\\x07" in story  # the raw ESC in the code, shown
    assert "\\x1b[2J\\x1b[Hall good" in story and "\\u202ereverse me\\x9b31m" in story
    assert json.loads(invoke("show", "1", "--json").stdout)["feedback"]["advice"] == advice
    invoke("logs")
    invoke("logs", "--json")
    invoke("runs")


def test_leaderboard_and_report_show_stored_names_visibly(tmp_path):
    store = Store(db_path())
    task_id = store.add_task(str(TASKS / "scale_add.py"), (TASKS / "scale_add.py").read_text())
    run_id = store.create_run(task_id=task_id, task_name="scale_add", model="gpt\u202e-evil", backend="triton")
    candidate_id = store.add_candidate(run_id, 1, 1, PAINTER, None, None, "triton")
    device = "<script>alert(1)</script>\x1b[2J\x9b2K"
    verdict = {"status": "passed", "speedup": 2.0, "candidate_ms": 1.0, "reference_ms": 2.0}
    store.add_evaluation(candidate_id, {**verdict, "environment": {"device_name": device, "torch": "2.9"}})

    invoke("leaderboard")  # a table too narrow for the names: that they print nothing raw is the point
    assert "gpt\\u202e-evil" in invoke("leaderboard", "--markdown").output
    invoke("leaderboard", "--csv")
    invoke("leaderboard", "--json")

    report = tmp_path / "report.html"
    invoke("report", "-o", report)
    html = report.read_text()
    assert_nothing_hidden(html)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[2J\\x9b2K" in html
