#!/usr/bin/env bash
# One batch of GPU work for a session that has the device (issue 6), in the order that pays most.
# Runs from the repository root on the GPU machine, with the image's own torch/triton/cupy/ncu;
# only forge_sandbox is needed there (no pydantic, openai or sqlite-utils). Usage:
#   bash bench/gpu_session.sh tests        # the gpu-marked evaluator tests (a few minutes)
#   bash bench/gpu_session.sh verify       # full-size verdicts: each stage's and configuration's seconds, memory
#   bash bench/gpu_session.sh repeat A-M   # repeatability of the bundled tasks whose names start with A..M
#   bash bench/gpu_session.sh repeat N-Z
#   bash bench/gpu_session.sh ncu          # profiling overhead, and real Nsight Compute output for fixtures
#   bash bench/gpu_session.sh latency      # verdict latency per backend (Triton, CUDA C++, CuPy), cold and warm
#   bash bench/gpu_session.sh baselines    # the torch.compile baseline's cache, cold and warm
#   bash bench/gpu_session.sh optimize     # a full scripted `forge optimize` (carry .whl: the control side's
#                                          # wheels, made by bench/control_wheels.sh on the development machine)
#   bash bench/gpu_session.sh all          # every step above in one command, each under its own time limit
#                                          # (GPU_BUDGET_* seconds), for a session's one short lease: the log
#                                          # and a tarball of the results land in $OUT even when a step overruns
# Results go to $OUT (the device tool brings it back) or bench/results/.
set -uo pipefail
cd "$(dirname "$0")/.."
# The image's python3 holds torch; a plain `python` may not exist there.
python() { command "${PYTHON:-python3}" "$@"; }
export -f python
export PYTHONPATH="$PWD/sandbox${PYTHONPATH:+:$PYTHONPATH}"
# forge's own kernels and fixtures only: where CUDA does not start in the candidate's isolation, lift
# its pieces one at a time rather than stop (each verdict says which), so that the session measures.
export FORGE_LESS_ISOLATION="${FORGE_LESS_ISOLATION:-1}"
out="${OUT:-bench/results}"
mkdir -p "$out"
stamp="$(date -u +%Y-%m-%d)"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv; \
  python -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'; \
  echo "commit ${FORGE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"; } > "$out/environment-$stamp.txt" 2>&1

case "${1:-tests}" in
  all)
    # One lease, every step in the order that pays most; `timeout` stops a step's whole process group.
    # The steps write to a folder of their own; $OUT gets the log and one tarball (the device tool
    # brings back few files, none deeper than two folders).
    log="$out/session-$stamp.log" results="${GPU_RESULTS:-/tmp/forge-gpu-results}"
    mkdir -p "$results"; cp "$out/environment-$stamp.txt" "$results/"; cat "$out/environment-$stamp.txt" > "$log"
    step() { local limit=$1; shift; [ "$limit" -gt 0 ] || { echo "=== $* skipped (limit 0)" | tee -a "$log"; return; }
             echo "=== $* (limit ${limit} s) $(date -u +%T)" | tee -a "$log"
             OUT="$results" timeout -k 10 "$limit" bash "$0" "$@" 2>&1 | tee -a "$log"
             echo "=== exit ${PIPESTATUS[0]} $(date -u +%T)" | tee -a "$log"; }
    # The defaults fit one 600 s command (an H100 session, 2026-11-26: the tests step needed more than
    # 200 s, and no full-size step finished in 110 s or less); a step given 0 s is skipped.
    step "${GPU_BUDGET_TESTS:-280}" tests
    step "${GPU_BUDGET_VERIFY:-120}" verify
    step "${GPU_BUDGET_NCU:-80}" ncu
    step "${GPU_BUDGET_OPTIMIZE:-80}" optimize
    step "${GPU_BUDGET_LATENCY:-0}" latency
    step "${GPU_BUDGET_REPEAT:-0}" repeat "${GPU_REPEAT_TASKS:-S-S}"
    tar czf "$out/results-$stamp.tgz" -C "$results" . && ls -laR "$results" >> "$log"
    ;;
  tests)
    # Does CUDA work inside the candidate's namespaces (isolation.py)? Piece by piece, then one verdict
    # (at the SMALL shapes: a full-size verification took minutes on the first GPU run, 2026-11-26).
    # The verdict runs with the whole isolation (FORGE_LESS_ISOLATION=0): where CUDA does not start in
    # it, it says so and stops, and the steps after lift the pieces that stop it.
    python bench/cuda_in_namespaces.py --out "$out" | tee "$out/cuda-in-namespaces-$stamp.txt"
    FORGE_LESS_ISOLATION=0 timeout 300 python -m forge_sandbox eval tasks/swiglu.py bench/kernels/swiglu.py --size small --verbose | python -c 'import json, sys
text = sys.stdin.read()
if not text.strip():
    sys.exit("isolation check: no verdict (the error is above)")
v = json.loads(text); e = v["environment"]
print("isolation check:", v["status"], "|", e.get("isolation"), "|", e.get("isolation_failures"), "|", e.get("files"), "|", v["warnings"], "|", v["stage_seconds"])' \
      | tee "$out/isolation-check-$stamp.txt"
    # One pytest per file, each test under its own limit (pytest-timeout, in the image), so that every
    # file's failures are printed even where a later one runs out of the step's time; the files whose
    # results are still owed go first (an H100, 2026-11-26: test_adversarial's first four passed, and
    # swiglu_cuda.py failed with its reason lost to the step's limit).
    for file in tests/test_bundled_kernels.py tests/test_timing.py tests/test_ncu.py tests/test_adversarial.py; do
      python -m pytest -v "$file" -m gpu -p no:cacheprovider --timeout="${GPU_TEST_TIMEOUT:-150}" -rfEs --tb=short \
        --durations=0 2>&1 | tee -a "$out/gpu-tests-$stamp.txt"
    done
    ;;
  verify)
    # A full-size verdict's stages and each configuration's verification time (the first GPU run's
    # blocker: none finished), with the largest process's memory.
    python bench/verify_at_full_size.py --out "$out" --tasks ${GPU_VERIFY_TASKS:-swiglu softmax_rows}
    ;;
  repeat)
    range="${2:-A-Z}"
    tasks=$(ls tasks | sed -n "s/^\([${range,,}${range^^}].*\)\.py$/\1/p")
    python bench/eval_repeatability.py --runs 5 --out "$out" --tasks $tasks
    ;;
  ncu)
    # forge's own profiling step (the candidate's kernels only, --clock-control none) on three
    # bundled kernels: its cost per candidate, and the first report exported as parser fixtures.
    ncu --version > "$out/ncu-version-$stamp.txt"
    python bench/profile_overhead.py --out "$out" --tasks softmax_rows gemm_fp16 layernorm
    ;;
  latency)
    python bench/verdict_latency.py --out "$out"
    ;;
  baselines)
    python bench/baseline_cache.py --out "$out"
    ;;
  optimize)
    if ls .whl/*.whl >/dev/null 2>&1; then
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="/tmp/site:$PYTHONPATH"
    fi
    export PYTHONPATH="$PWD:$PYTHONPATH"
    python bench/scripted_optimize.py --task softmax_rows --out "$out"
    ;;
esac
