"""A non-editable install carries the bundled tasks and prompts, and the sandbox as its own package."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from conftest import REPO


def test_wheel_carries_tasks_prompts_and_the_sandbox(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(REPO),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "forge_sandbox/runner.py" in names and "forge/cli.py" in names
    assert sum(n.startswith("forge/_bundled/tasks/") for n in names) >= 12
    assert "forge/_bundled/prompts/README.md" in names
    assert not any(n.startswith(("sandbox/", "tests/")) for n in names)

    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)], check=True
    )
    code = "from forge.paths import bundled_dir; print(bundled_dir('tasks'))"
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert out.stdout.strip().startswith(str(target))
