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


def test_sliced_trials_take_every_misalignment_of_a_vector_in_turn():
    # A review, 2026-12-04: a kernel wrong 8 and 12 bytes past a 16-byte boundary passed, where every sliced
    # trial lay one element (4 bytes of a float) in
    assert [4 * k % 16 for k in variants.slice_offsets(4)[:3]] == [8, 4, 12]
    assert sorted({2 * k % 16 for k in variants.slice_offsets(2)[:8]}) == [0, 2, 4, 6, 8, 10, 12, 14]
    x = torch.randn(3, 5)
    seen = {variants.apply_layout([x], "sliced")[0].storage_offset() * 4 % 16 for _ in range(3)}
    assert seen == {4, 8, 12}


def test_a_broadcast_input_is_one_value_per_row_in_memory_of_one_per_row():
    x = torch.randn(4, 7, dtype=torch.float64)
    values = variants.transform_values([x, torch.arange(3)], "broadcast")
    laid = variants.apply_layout(values, "broadcast")
    assert laid[0].stride()[-1] == 0 and laid[0].untyped_storage().nbytes() == 4 * 8
    assert torch.equal(laid[0], values[0]) and torch.equal(values[0], x[:, :1].expand(4, 7))
    assert torch.equal(laid[1], torch.arange(3))  # integers stay as made
