"""Attack (host harm): reads a file from the user's home folder (keys, tokens) and puts it in its error,
which forge stores and shows. The path comes from FORGE_TEST_SECRET (the test plants the file)."""

import os

path = os.environ.get("FORGE_TEST_SECRET", os.path.expanduser("~/.ssh/id_rsa"))
with open(path) as f:
    raise RuntimeError(f"leaked: {f.read()}")
