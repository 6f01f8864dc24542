"""Trials' call conditions (variants): what they leave behind in the runner's process."""

from __future__ import annotations

import os
import time

import torch

from forge_sandbox import variants


def _tasks() -> int:
    return len(os.listdir("/proc/self/task"))


def test_a_call_at_many_threads_leaves_no_idle_workers_behind():
    # Idle OpenMP workers in the candidate's runner lengthen every host window of its timed calls (the
    # freezer stops and resumes each), time the reference never pays: the trial at 67 threads used to
    # leave 66 of them for the rest of the evaluation.
    torch.ones(1 << 22).sum()  # the pool at the process's own thread count
    before = _tasks()
    with variants.call_condition(variants.OTHER_THREADS):
        assert torch.get_num_threads() >= variants.MANY_THREADS
        torch.ones(1 << 24).sum()
        assert _tasks() > before + 32  # the test can see a pool that grew
    deadline = time.monotonic() + 10.0
    while _tasks() > before + 1 and time.monotonic() < deadline:
        time.sleep(0.05)  # the workers exit on their own once released
    assert _tasks() <= before + 1, (before, _tasks())
