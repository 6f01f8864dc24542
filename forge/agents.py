"""The coder and the judge: prompts in, a candidate file or one piece of advice out."""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ValidationError

from forge.evaluation import compile_baseline, torch_ops_text
from forge.llm import CallRecord, LLMClient
from forge.prompts import Template
from forge_sandbox.hardware import describe as describe_hardware

JSON_BLOCK = re.compile(r"```json[ \t]*\n(.*?)```", re.S)


class RepairAdvice(BaseModel):
    """The judge on a failed candidate: the one issue that broke it, and how to fix it."""

    critical_issue: str
    fix_hint: str


class OptimizeAdvice(BaseModel):
    """The judge on a correct candidate: its bottleneck, the evidence, and one next step."""

    bottleneck: str
    evidence: str
    next_optimization: str


FENCE = re.compile(r"^\s*```\s*([\w+.-]*)\s*$")


def code_blocks(text: str) -> list[tuple[str, str]]:
    """Fenced blocks as (language tag, body), read line by line so that any tag pairs correctly."""
    blocks, lang, body = [], None, []
    for line in (text or "").splitlines():
        fence = FENCE.match(line)
        if lang is None and fence:
            lang, body = fence.group(1).lower(), []
        elif lang is not None and fence and not fence.group(1):
            blocks.append((lang, "\n".join(body)))
            lang = None
        elif lang is not None:
            body.append(line)
    return blocks


def extract_code(text: str) -> str | None:
    """The candidate file in an answer: the last Python block that defines ``class ModelNew``.

    Answers often carry other blocks too (the CUDA source on its own, a usage
    example): only a block that defines the class is a candidate file.
    """
    for lang, body in reversed(code_blocks(text)):
        if lang in ("python", "py", "python3", "") and re.search(r"^class\s+ModelNew\b", body, re.M):
            return body.strip("\n") + "\n"
    return None


def extract_json(text: str, schema: type[BaseModel]) -> BaseModel | None:
    """Validate the JSON object in an answer (a ```json block, or the outermost braces)."""
    candidates = JSON_BLOCK.findall(text or "")
    start, end = (text or "").find("{"), (text or "").rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for raw in candidates:
        try:
            return schema.model_validate(json.loads(raw))
        except (ValueError, ValidationError):
            continue
    return None


def describe_failure(verdict: dict) -> str:
    """A failed verdict as the judge and the coder should read it."""
    lines = [f"Status: {verdict.get('status')}"]
    lines += [f"- {reason}" for reason in verdict.get("reasons", [])]
    compile_log = (verdict.get("compile_log") or "").strip()
    if compile_log and verdict.get("status") == "compile_error":
        lines += ["", "Compiler output (tail):", compile_log[-3000:]]
    log_tail = (verdict.get("log_tail") or "").strip()
    if log_tail and verdict.get("status") in ("runtime_error", "crashed"):
        lines += ["", "Process output (tail):", log_tail[-2000:]]
    return "\n".join(lines)


def describe_timings(verdict: dict) -> str:
    """A passed verdict's times against both baselines, how repeatable its speedup was, and where its
    forward's time went (its own kernels, and the PyTorch operators it still runs)."""
    lines = [
        f"candidate {verdict.get('candidate_ms')} ms (IQR {verdict.get('candidate_iqr_ms')}), "
        f"eager PyTorch {verdict.get('reference_ms')} ms (IQR {verdict.get('reference_iqr_ms')}), "
        f"speedup {verdict.get('speedup')}x over eager PyTorch; "
        f"method: {(verdict.get('timing') or {}).get('method', 'unknown')}"
    ]
    compiled = compile_baseline(verdict)
    if compiled.get("ms") is not None:
        lines.append(
            f"torch.compile ({compiled.get('mode')}) of the reference {compiled['ms']} ms "
            f"(IQR {compiled.get('iqr_ms')}), speedup {verdict.get('speedup_vs_compile')}x over torch.compile"
        )
    elif compiled:
        lines.append(f"no torch.compile baseline ({compiled.get('mode')}): {compiled.get('reason')}")
    spread = (verdict.get("timing") or {}).get("repeatability") or {}
    if spread:
        lines.append(
            f"repeatability: speedup over eager from {spread.get('speedup_min')}x to {spread.get('speedup_max')}x "
            f"across {spread.get('blocks')} timed blocks (coefficient of variation {spread.get('speedup_cv')})"
        )
    if verdict.get("own_share") is not None:
        lines.append(f"own kernels: {100 * verdict['own_share']:.0f}% of the forward's time")
    if verdict.get("torch_ops"):
        lines.append(f"PyTorch operators the forward still runs: {torch_ops_text(verdict['torch_ops'])}")
    elif "torch_ops" in verdict:
        lines.append("PyTorch operators the forward still runs: none")
    return "\n".join(lines)


def describe_metrics(verdict: dict) -> str:
    """The hardware evidence that this evaluation measured, and what it did not."""
    lines = describe_hardware(verdict.get("hardware") or {})
    lines += [f"note: {warning}" for warning in verdict.get("warnings", [])]
    return "\n".join(lines) or "no hardware evidence was collected"


class Coder:
    def __init__(self, client: LLMClient, template: Template, temperature: float | None = None) -> None:
        self.client = client
        self.template = template
        self.temperature = temperature

    def write(
        self, *, task_source: str, device_facts: str, backend_rules: str, history: str
    ) -> tuple[CallRecord, str | None]:
        messages = self.template.render(
            task_source=task_source, device_facts=device_facts, backend_rules=backend_rules, history=history
        )
        record = self.client.chat(messages, temperature=self.temperature)
        if record.error:
            return record, None
        code = extract_code(record.text)
        if code is None:
            record.error = "the answer has no ```python block defining ModelNew"
        return record, code


class Judge:
    def __init__(self, client: LLMClient, templates: dict[str, Template], structured: bool = True) -> None:
        self.client = client
        self.templates = templates
        self.structured = structured  # turned off for the run when the server rejects response_format

    def repair(self, *, task_source: str, candidate_source: str, verdict: dict, device_facts: str) -> list[CallRecord]:
        messages = self.templates["judge_repair"].render(
            task_source=task_source,
            candidate_source=candidate_source,
            error=describe_failure(verdict),
            device_facts=device_facts,
        )
        return self._ask(messages, RepairAdvice)

    def optimize(
        self, *, task_source: str, candidate_source: str, verdict: dict, device_facts: str
    ) -> list[CallRecord]:
        messages = self.templates["judge_optimize"].render(
            task_source=task_source,
            candidate_source=candidate_source,
            timings=describe_timings(verdict),
            metrics=describe_metrics(verdict),
            device_facts=device_facts,
        )
        return self._ask(messages, OptimizeAdvice)

    def _ask(self, messages: list, schema: type[BaseModel]) -> list[CallRecord]:
        """Every call made (all are logged); the last one carries the advice, or the error."""
        records = []
        if self.structured:
            fmt = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
            }
            records.append(self.client.chat(messages, response_format=fmt))
            if records[-1].extra.get("status_code") in (400, 422):  # the server has no structured outputs
                self.structured = False
        if not records or not self.structured:
            records.append(self.client.chat(messages))
        record = records[-1]
        if not record.error:
            advice = extract_json(record.text, schema)
            if advice is None:
                record.error = f"the answer is not a valid {schema.__name__} JSON object"
            else:
                record.parsed = advice.model_dump()
        return records
