#!/usr/bin/env bash
# The control side's packages that the GPU image lacks (pydantic, openai, sqlite-utils and what they
# need), as wheels in .whl/ for the device tool to carry: `bash bench/gpu_session.sh optimize` installs
# them. Versions are the ones installed in this machine's venv, so both sides run the same code.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .git/info .whl
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
pins=$(python -m pip list --format=freeze 2>/dev/null | grep -iE '^(openai|httpx2|httpcore2|truststore|jiter|pydantic|pydantic[-_]core|annotated[-_]types|typing[-_]inspection|sniffio|sqlite[-_]utils|sqlite[-_]fts4|click[-_]default[-_]group|click|rich|typing[-_]extensions)==')
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl $pins
ls .whl
