"""The process Nsight Compute profiles: one candidate, one forward pass inside a profiler range.

Started by :mod:`forge_sandbox.ncu` as ``ncu ... python -m forge_sandbox.profile_target
--candidate C --init-inputs I --inputs X --init-seed S --device D``. It builds
``ModelNew`` exactly as the candidate runner did (the same inputs, which the
reference runner saved, the same init seed, the same compile hooks so that a
load_inline build hits its cache), warms up outside the range (compiles,
autotuning, lazy allocations), then runs one forward pass between
``cudaProfilerStart`` and ``cudaProfilerStop``: with ``--profile-from-start off``
ncu sees that pass only. Nothing it prints is read as a result; ncu's report is
the evidence, and it is diagnostic, never the verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

from forge_sandbox import isolation, protocol
from forge_sandbox.candidate_runner import build_model, import_candidate
from forge_sandbox.runner import to_device


def run(candidate: str, init_inputs: str, inputs: str, init_seed: int, device_name: str, warmup: int) -> None:
    device = torch.device(device_name)
    module, _ = import_candidate(candidate)
    args = to_device(protocol.load_tensors(inputs)[0], device)
    model, _ = build_model(module, protocol.load_tensors(init_inputs), init_seed, device)
    on_cuda = device.type == "cuda"
    with torch.no_grad():
        for _ in range(warmup):
            model(*args)
        if on_cuda:
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
        model(*args)
        if on_cuda:
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--init-inputs", required=True)
    parser.add_argument(
        "--inputs", required=True, help="the saved input sets (the timing pool's); the first one is profiled"
    )
    parser.add_argument("--init-seed", type=int, required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--layout", default="{}", help="JSON: the folders bound back inside (isolation.layout)")
    args = parser.parse_args(argv)
    if os.getpid() == 1:  # started in namespaces of its own (ncu.py, isolated profiling)
        print("forge profile target:", isolation.settle(json.loads(args.layout)))
    run(args.candidate, args.init_inputs, args.inputs, args.init_seed, args.device, args.warmup)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # as the runner: no candidate atexit hooks, no CUDA teardown hangs


if __name__ == "__main__":
    main()
