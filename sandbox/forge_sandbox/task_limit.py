"""A bound on the threads and processes of a candidate's runner, kept by the kernel.

A candidate that starts threads or processes without end (a fork bomb, a thread per element) takes
the machine's process IDs, and with them every other program's ability to start anything: the host's
own compiler, its shell, the next evaluation. Namespaces do not bound it (a PID namespace numbers
its tasks apart, it does not limit them), and a per-user limit would bound the host too. So before
any candidate code runs, the host makes a pids cgroup of its own for the runner, puts the runner's
processes in it, and sets its bound: the kernel then refuses the task past it (fork or
pthread_create fails with EAGAIN) and counts the refusals, which the verdict reports.

Where the host may not make one (no pids controller, or cgroup v2 without pids delegated to the
host's group), :func:`make` says why and the host's resource watch counts the runner's tasks instead
(host.ResourceWatch), which can only kill after the fact, 50 ms at a time.
"""

from __future__ import annotations

import os
import signal
import time
import uuid

# Threads and processes together: PyTorch's and OpenMP's pools take one thread per core each, and a
# kernel may bring an OpenMP runtime of its own beside PyTorch's.
MAX_TASKS = max(1024, 8 * (os.cpu_count() or 1))

_V1_ROOT = "/sys/fs/cgroup/pids"
_V2_ROOT = "/sys/fs/cgroup"


class TaskLimit:
    """One pids cgroup, made for one runner and removed with it."""

    def __init__(self, path: str, limit: int) -> None:
        self.path, self.limit = path, limit

    def enter(self, pids: list[int]) -> str:
        """Put ``pids`` (every process of the runner, before any candidate code runs) in the group;
        what they start later is born in it. '' when they are in, else why not (the group is then
        removed: the host's count is the bound)."""
        for pid in pids:
            try:
                _write(os.path.join(self.path, "cgroup.procs"), str(pid))
            except ProcessLookupError:
                continue  # gone meanwhile
            except OSError as exc:
                self.close()
                return f"its processes could not be moved into a pids group ({exc.strerror})"
        return ""

    def refused(self) -> int:
        """How many threads or processes the kernel refused at the bound so far."""
        try:
            with open(os.path.join(self.path, "pids.events")) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "max":
                        return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def tasks(self) -> list[int]:
        try:
            with open(os.path.join(self.path, "cgroup.procs")) as f:
                return [int(line) for line in f if line.strip()]
        except (OSError, ValueError):
            return []

    def close(self) -> None:
        """Kill what is left in the group and remove it (a group with tasks cannot be removed)."""
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            left = self.tasks()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    continue
            time.sleep(0.01)
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)  # the last tasks are still being reaped


def make(name: str = "", limit: int = MAX_TASKS) -> tuple[TaskLimit | None, str]:
    """A new group bounded at ``limit`` tasks, or (None, why none could be made)."""
    name = f"forge-{name or uuid.uuid4().hex[:12]}"
    where, why = _parent()
    if not where:
        return None, why
    _sweep(where)
    path = os.path.join(where, name)
    try:
        os.mkdir(path)
    except OSError as exc:
        return None, f"no pids group could be made in {where} ({exc.strerror})"
    try:
        _write(os.path.join(path, "pids.max"), str(limit))
    except OSError as exc:
        TaskLimit(path, limit).close()
        return None, f"the pids group's bound could not be set ({exc.strerror})"
    return TaskLimit(path, limit), ""


LEFT_BEHIND_S = 3600  # an empty group this old was left by a host killed before it could remove it


def _sweep(where: str) -> None:
    """Remove the empty groups that hosts killed with -9 left behind (one a live host just made is
    younger, and removing a group with tasks fails)."""
    try:
        entries = [e for e in os.scandir(where) if e.name.startswith("forge-") and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for entry in entries:
        try:
            if time.time() - entry.stat().st_mtime > LEFT_BEHIND_S and not TaskLimit(entry.path, 0).tasks():
                os.rmdir(entry.path)
        except OSError:
            continue


def _parent() -> tuple[str, str]:
    """Where the host may make a pids group: cgroup v1's pids hierarchy (its own group there), or its
    own cgroup v2 group where the pids controller is delegated to its children."""
    own_v1, own_v2 = None, None
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if "pids" in controllers.split(","):
                    own_v1 = path
                elif controllers == "":
                    own_v2 = path
    except (OSError, ValueError):
        return "", "the host's cgroups could not be read"
    if own_v1 is not None and os.path.isdir(_V1_ROOT):
        return _V1_ROOT + own_v1.rstrip("/"), ""
    if own_v2 is not None:
        group = _V2_ROOT + own_v2.rstrip("/")
        try:
            with open(os.path.join(group, "cgroup.subtree_control")) as f:
                if "pids" in f.read().split():
                    return group, ""
        except OSError:
            pass
        return "", "cgroup v2 without the pids controller delegated to the host's group"
    return "", "no pids cgroup controller"


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
