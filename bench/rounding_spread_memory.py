"""The reference runner's rounding spread (variants.rounding_spread) at a task's full size: its peak
memory beyond the inputs and the output it is taken of, and its time.

At full size the reference runner holds a group of trials, the timing pool and the payload besides, and
on a 24 GiB machine its spread's temporaries were what tipped a full-size swiglu verdict over (see
bench/results/verify-full-size-cpu-2026-11-26). Each measurement runs in a fresh process, so that its
peak (ru_maxrss) is its own.

    python bench/rounding_spread_memory.py --task tasks/swiglu.py          # the task's full size
    python bench/rounding_spread_memory.py --task tasks/sum_dim.py --size small
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(task_path: str, size: str) -> dict:
    import torch

    from forge_sandbox import taskfile, variants

    torch.manual_seed(0)
    module = taskfile.load_task(task_path, taskfile.configurations(taskfile.load_task(task_path), size)[0])
    model = module.Model(*module.get_init_inputs())
    inputs = module.get_inputs()
    with torch.no_grad():
        output = model(*inputs)
        held_mb = sum(x.numel() * x.element_size() for x in [*inputs, output] if isinstance(x, torch.Tensor)) / 2**20
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        start = time.perf_counter()
        spread = variants.rounding_spread(lambda x: model(*x), inputs, output)
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "task": os.path.basename(task_path),
        "size": size,
        "inputs_and_output_mb": round(held_mb, 1),
        "output_mb": round(output.numel() * output.element_size() / 2**20, 1),
        "peak_before_mb": round(before, 1),
        "peak_mb": round(peak, 1),
        "spread_peak_beyond_mb": round(peak - before, 1),
        "seconds": round(seconds, 2),
        "spread_max": None if spread is None else float(spread.max()),
        "threads": torch.get_num_threads(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default=os.path.join(REPO, "tasks", "swiglu.py"))
    parser.add_argument("--size", default="default", choices=["default", "small"])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.task, args.size)))
        return
    out = subprocess.run([sys.executable, __file__, "--child", "--task", args.task, "--size", args.size],
                         capture_output=True, text=True, check=True)  # fmt: skip
    print(out.stdout.strip())


if __name__ == "__main__":
    main()
