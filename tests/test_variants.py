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


def test_thread_counts_are_drawn_afresh_besides_the_fixed_ones():
    # A review, 2026-12-02: a kernel with a table of eight chunks was wrong from 9 to 64 threads and right at
    # every count forge used; the counts of common machines are drawn for each trial, from the system's
    # generator (no seed of the candidate's reaches it).
    import random

    random.seed(0)
    drawn = [variants.other_thread_counts(2) for _ in range(40)]
    fixed = variants.other_thread_counts(2, drawn=False)
    assert all(counts[: len(fixed)] == fixed for counts in drawn)  # the censused call's first count stays
    extra = {n for counts in drawn for n in counts[len(fixed) :]}
    assert any(9 <= n <= 16 for n in extra) and any(17 <= n <= 64 for n in extra)
    assert len({tuple(counts) for counts in drawn}) > 1
    assert all(2 not in counts for counts in drawn)  # never the runner's own count again
