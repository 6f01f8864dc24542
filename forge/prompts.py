"""Prompt templates from prompts/: one file per role and mode, with named {{placeholders}}.

A template's system part comes before a line ``=== user ===`` and its user
part after. Loading a template checks its placeholders against the names the
code supplies for it, both ways: a template that uses an unknown name, or
leaves out a required one, is an error at load time, not a broken prompt.
"""

from __future__ import annotations

import os
import re

from forge.paths import bundled_dir

PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
SEPARATOR = "=== user ==="

# template -> the placeholders it must contain (and the only ones it may)
TEMPLATES = {
    "coder": {"device_facts", "backend_rules", "task_source", "history"},
    "judge_repair": {"device_facts", "task_source", "candidate_source", "error"},
    "judge_optimize": {"device_facts", "task_source", "candidate_source", "timings", "metrics"},
}
BACKENDS = ("triton", "cuda", "cupy")


class PromptError(ValueError):
    """A template that does not fit the code that fills it."""


class Template:
    def __init__(self, name: str, text: str) -> None:
        if SEPARATOR not in text:
            raise PromptError(f"prompts/{name}.md: no '{SEPARATOR}' line between the system and user parts")
        self.name = name
        self.system, self.user = (part.strip("\n") for part in text.split(SEPARATOR, 1))
        found = set(PLACEHOLDER.findall(text))
        required = TEMPLATES[name]
        if found - required:
            raise PromptError(f"prompts/{name}.md: unknown placeholder(s) {sorted(found - required)}")
        if required - found:
            raise PromptError(f"prompts/{name}.md: missing placeholder(s) {sorted(required - found)}")

    def render(self, **values: str) -> list[dict]:
        missing = TEMPLATES[self.name] - values.keys()
        if missing:
            raise PromptError(f"prompts/{self.name}.md: no value for {sorted(missing)}")

        def fill(part: str) -> str:
            return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), part)

        return [{"role": "system", "content": fill(self.system)}, {"role": "user", "content": fill(self.user)}]


def load_templates(directory: str | None = None) -> dict[str, Template]:
    directory = directory or bundled_dir("prompts")
    templates = {}
    for name in TEMPLATES:
        path = os.path.join(directory, f"{name}.md")
        if not os.path.exists(path):
            raise PromptError(f"{path}: missing prompt template")
        with open(path) as f:
            templates[name] = Template(name, f.read())
    return templates


def backend_rules(backend: str, directory: str | None = None) -> str:
    if backend not in BACKENDS:
        raise PromptError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    with open(os.path.join(directory or bundled_dir("prompts"), "backends", f"{backend}.md")) as f:
        return f.read().strip()
