"""The README stays true: every command is documented, and CI runs the README's test command."""

from __future__ import annotations

import re

from conftest import REPO
from forge.cli import main


def test_every_command_has_help_and_is_in_the_readme():
    readme = (REPO / "README.md").read_text()
    for name, command in main.commands.items():
        assert command.help, f"forge {name} has no help text"
        assert f"forge {name}" in readme, f"forge {name} is not documented in README.md"


def test_ci_runs_the_readmes_test_command():
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert len(blocks) >= 2, "the README leads with two commands"
    test_command = blocks[1].strip()
    install_and_test = test_command.split("pip install torch==2.13.0 && ", 1)[1]
    assert install_and_test in (REPO / ".ci" / "run").read_text()
