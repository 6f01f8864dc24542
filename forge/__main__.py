"""``python -m forge``: the same command line as ``forge``."""

from forge.cli import main

main(prog_name="forge")
