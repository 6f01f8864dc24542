"""A candidate's threads, processes and memory are bounded by groups the kernel keeps."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from conftest import cpu_eval
from forge_sandbox import host, runner_cgroups

_STARTER = """
import sys, threading, time
hold, started = threading.Event(), 0
try:
    for _ in range(int(sys.argv[1])):
        threading.Thread(target=hold.wait, daemon=True).start()
        started += 1
except RuntimeError:
    pass
print(started, flush=True)
time.sleep(float(sys.argv[2]))  # every thread still held
hold.set()
"""


def test_a_pids_group_refuses_the_thread_past_its_bound():
    limit, why_not = runner_cgroups.make("pids", 30)
    if limit is None:
        pytest.skip(f"no pids group here: {why_not}")
    try:
        child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()\n" + _STARTER, "100", "0"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
        limit.enter([child.pid])  # before it starts any thread: all of them are born in the group
        out, _ = child.communicate("go\n", timeout=60)
        assert int(out) < 30, out  # the main thread counts too
        assert limit.refused() >= 1
    finally:
        limit.close()
    assert not limit.tasks()


def test_the_hosts_count_sees_every_thread():
    hold = threading.Event()
    threads = [threading.Thread(target=hold.wait, daemon=True) for _ in range(5)]
    for t in threads:
        t.start()
    try:
        assert host.resident_and_tasks([__import__("os").getpid()])[1] >= 6
    finally:
        hold.set()


def test_a_thread_bomb_ends_at_the_bound_and_the_verdict_says_so():
    verdict = cpu_eval("bad_task_bomb", static_checks=False, timeout=120.0)
    assert verdict.status in {"runtime_error", "rejected", "crashed"}, verdict.reasons
    reasons = " ".join(verdict.reasons)
    assert f"bound of {runner_cgroups.MAX_TASKS} threads" in reasons or "threads and processes, more than" in reasons, (
        reasons
    )
    assert "threads and processes" in verdict.environment.get("tasks", ""), verdict.environment


class _Runner:
    """The parts of a RunnerProcess the watch uses, around a plain child process."""

    def __init__(self, child: subprocess.Popen) -> None:
        self.child, self.watch_failure = child, ""

    def processes(self) -> list[int]:
        return [self.child.pid] if self.child.poll() is None else []

    def kill(self) -> None:
        self.child.kill()


def test_where_no_group_can_be_made_the_hosts_watch_kills_past_the_bound():
    child = subprocess.Popen([sys.executable, "-c", _STARTER, "200", "30"],
                             stdout=subprocess.DEVNULL)  # fmt: skip
    runner = _Runner(child)
    watch = host.ResourceWatch(runner, limit_bytes=2**40, max_tasks=50, every_s=0.02)
    try:
        child.wait(timeout=20)  # killed by the watch long before its 30 s sleep ends
    finally:
        watch.stop()
        child.kill()
    assert "more than the 50 allowed" in runner.watch_failure, runner.watch_failure


def test_groups_left_behind_by_a_killed_host_are_swept():
    limit, why_not = runner_cgroups.make("pids", 10)
    if limit is None:
        pytest.skip(f"no pids group here: {why_not}")
    old = time.time() - runner_cgroups.LEFT_BEHIND_S - 60
    os.utime(limit.path, (old, old))  # as if a host killed an hour ago had made it
    fresh, _ = runner_cgroups.make("pids", 10)
    try:
        assert not os.path.exists(limit.path)
        assert os.path.isdir(fresh.path)  # a young group stays
    finally:
        fresh.close()
        limit.close()


def test_a_memory_group_is_charged_for_memory_no_process_maps():
    group, why_not = runner_cgroups.make("memory", 2**31)
    if group is None:
        pytest.skip(f"no memory group here: {why_not}")
    holder = (
        "import os, sys; sys.stdin.readline()\n"
        "fd = os.memfd_create('held'); os.posix_fallocate(fd, 0, 200 * 2**20)\n"
        "print('held', flush=True); sys.stdin.readline()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert group.enter([child.pid]) == ""
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "held"
        assert group.charged() >= 200 * 2**20, group.charged()
        assert host.resident_and_tasks([child.pid])[0] < 100 * 2**20  # what /proc alone would have shown
    finally:
        child.kill()
        child.wait()
        group.close()


def test_past_the_memory_groups_hard_limit_the_kernel_kills_inside_the_group_and_says_so():
    group, why_not = runner_cgroups.make("memory", 64 * 2**20)
    if group is None:
        pytest.skip(f"no memory group here: {why_not}")
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline(); b = bytearray(400 * 2**20)"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        assert group.enter([child.pid]) == ""
        child.communicate(b"go\n", timeout=60)
        assert child.returncode == -9  # SIGKILL, from the kernel: the host was never at risk
        assert group.killed_for_memory() >= 1
    finally:
        child.kill()
        group.close()


def test_on_cgroup_v2_a_runners_bounds_share_one_group(tmp_path, monkeypatch):
    # A task is in one v2 group only: a second group for the memory bound would take the runner out of
    # the pids group. A fake of make() lays out the files the kernel gives a new v2 group.
    def make_v2(controller: str, bound: int, name: str = ""):
        path = tmp_path / f"forge-{len(list(tmp_path.iterdir()))}"
        path.mkdir()
        for name in ("cgroup.procs", "pids.max", "memory.max", "cgroup.freeze", "cpu.stat"):
            (path / name).write_text("")
        group = runner_cgroups.RunnerGroup(controller, str(path), v2=True)
        return group, group.bound(controller, bound)

    monkeypatch.setattr(runner_cgroups, "make", make_v2)
    monkeypatch.setattr(runner_cgroups, "on_v2", lambda controller: True)
    groups, why_not = runner_cgroups.make_bounds({"pids": 10, "memory": 99}, [os.getpid()])
    assert why_not == {"pids": "", "memory": ""}
    assert groups["pids"] is groups["memory"] and len(list(tmp_path.iterdir())) == 1
    group = tmp_path / os.path.basename(groups["pids"].path)
    assert (group / "pids.max").read_text() == "10" and (group / "memory.max").read_text() == "99"


def test_a_held_freezing_group_is_frozen_empty_and_removed_on_close():
    held = runner_cgroups.hold_freezing()
    if held is None:
        pytest.skip(f"no freezer group here: {runner_cgroups.make('freezer', 0)[1]}")
    try:
        state = "cgroup.freeze" if held.v2 else "freezer.state"
        with open(os.path.join(held.path, state)) as f:
            assert f.read().strip() in {"1", "FROZEN"}
        assert held.tasks() == []
    finally:
        held.close()
    assert not os.path.exists(held.path)


def test_an_evaluation_holds_a_frozen_group_while_its_runners_are_stopped_and_removes_it(monkeypatch):
    """The host stops and resumes both runners after every timed call on the CPU; a group held frozen
    meanwhile keeps the kernel from rewriting its code at each of the candidate's stops only
    (runner_cgroups.hold_freezing). The group the evaluation takes is read from outside while it runs
    (another evaluation on the machine holds one of its own)."""
    where, _, why_not = runner_cgroups._parent("freezer")
    if not where:
        pytest.skip(f"no freezer group here: {why_not}")
    taken: list = []
    hold = runner_cgroups.hold_freezing
    monkeypatch.setattr(runner_cgroups, "hold_freezing", lambda: taken.append(hold()) or taken[-1])
    verdicts = []
    evaluation = threading.Thread(target=lambda: verdicts.append(cpu_eval("honest_cpp_large_speedup",
                                                                          task="slow_running_max", timeout=300.0)))
    evaluation.start()
    held_frozen = False
    while evaluation.is_alive():
        group = taken[0] if taken else None
        if group is not None and not held_frozen:
            state = "cgroup.freeze" if group.v2 else "freezer.state"
            try:
                with open(os.path.join(group.path, state)) as f:
                    held_frozen = f.read().strip() in {"1", "FROZEN"} and not group.tasks()
            except OSError:
                pass  # removed meanwhile
        time.sleep(0.01)
    evaluation.join()
    assert verdicts and verdicts[0].status == "passed", verdicts and verdicts[0].reasons
    assert "a freezer cgroup for each runner" in verdicts[0].environment["stopping"]
    assert len(taken) == 1 and taken[0] is not None, taken
    assert held_frozen, "the held group was not frozen, or not empty"
    assert not os.path.exists(taken[0].path), "the held group was left behind"
