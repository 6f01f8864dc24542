#!/usr/bin/env bash
# One batch of GPU work for a session that has the device (issue 6), in the order that pays most.
# Runs from the repository root on the GPU machine, with the image's own torch/triton/cupy/ncu;
# only forge_sandbox is needed there (no pydantic, openai or sqlite-utils). Usage:
#   bash bench/gpu_session.sh tests        # the gpu-marked evaluator tests (a few minutes)
#   bash bench/gpu_session.sh repeat A-M   # repeatability of the bundled tasks whose names start with A..M
#   bash bench/gpu_session.sh repeat N-Z
#   bash bench/gpu_session.sh ncu          # record Nsight Compute output for the parser's fixtures
# Results go to $OUT (the device tool brings it back) or bench/results/.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/sandbox${PYTHONPATH:+:$PYTHONPATH}"
out="${OUT:-bench/results}"
mkdir -p "$out"
stamp="$(date -u +%Y-%m-%d)"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv; \
  python -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'; \
  git rev-parse --short HEAD 2>/dev/null; } > "$out/environment-$stamp.txt" 2>&1

case "${1:-tests}" in
  tests)
    python -m pytest -q tests/test_adversarial.py -m gpu -p no:cacheprovider 2>&1 | tee "$out/gpu-tests-$stamp.txt"
    ;;
  repeat)
    range="${2:-A-Z}"
    tasks=$(ls tasks | sed -n "s/^\([${range,,}${range^^}].*\)\.py$/\1/p")
    python bench/eval_repeatability.py --runs 5 --out "$out" --tasks $tasks
    ;;
  ncu)
    # The candidate's own kernel only (not PyTorch's, not the flush), clocks as in event timings.
    python - <<'PY' > /tmp/forge_ncu_target.py
print('''
import os, sys, torch
sys.path.insert(0, "sandbox")
from forge_sandbox.taskfile import load_module, load_task
task = load_task("tasks/softmax_rows.py")
cand = load_module("bench/kernels/softmax_rows.py", "candidate")
torch.manual_seed(0)
model = cand.ModelNew(*task.get_init_inputs()).cuda()
x = [t.cuda() for t in task.get_inputs()]
for _ in range(3):
    model(*x)
torch.cuda.synchronize()
''')
PY
    ncu --version > "$out/ncu-version-$stamp.txt"
    ncu --target-processes all --kernel-name-base function -k regex:softmax --launch-skip 1 --launch-count 1 \
        --clock-control none --set full -f -o "$out/softmax_rows-$stamp" python /tmp/forge_ncu_target.py
    ncu -i "$out/softmax_rows-$stamp.ncu-rep" --page raw --csv --print-units base > "$out/softmax_rows-raw-$stamp.csv"
    ncu -i "$out/softmax_rows-$stamp.ncu-rep" --page details --print-details all > "$out/softmax_rows-details-$stamp.txt"
    ;;
esac
