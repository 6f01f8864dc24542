"""Bounds on a candidate runner that the kernel keeps: its threads and processes, and its memory.

A candidate that starts threads or processes without end (a fork bomb, a thread per element) takes
the machine's process IDs, and with them every other program's ability to start anything: the host's
own compiler, its shell, the next evaluation. Namespaces do not bound it (a PID namespace numbers
its tasks apart, it does not limit them), and a per-user limit would bound the host too. Memory that
no process maps (a memfd or shared memory filled and closed over) is in no process's resident count,
which is all the host can read from /proc. So before any candidate code runs, the host makes a pids
and a memory cgroup of its own for the runner and puts the runner's processes in both; everything
they start is born in them:

- pids: the kernel refuses the task past the bound (fork or pthread_create fails with EAGAIN) and
  counts the refusals, which the verdict reports;
- memory: every page the runner's processes are charged for (their own, memfd and shared memory
  included) is read from the group (:meth:`RunnerGroup.charged`) by the host's watch, which kills
  the runner beyond its memory limit; the group's hard limit, a little above, lets the kernel stop
  an allocation faster than the watch reads (its OOM killer then picks inside the group only).

- freezer: after each timed call on the CPU the host stops every task of the runner at once
  (:meth:`RunnerGroup.freeze`): a task forked meanwhile is born frozen, and no SIGCONT of another
  task undoes it (hosted_calls). Both runners get one, so that stopping costs both sides alike.
- cpuacct (v1; any v2 group has the same in cpu.stat): the CPU time of every task the group ever
  held (:meth:`RunnerGroup.cpu_seconds`), a child the kernel reaped itself included (SIGCHLD
  ignored: /proc shows it nowhere once gone, and no parent's count of its children's time has it).

Where the host may not make one (no such controller, or cgroup v2 without it delegated to the host's
group), :func:`make` says why and the host's resource watch counts what /proc shows (host.ResourceWatch);
without a freezer the host stops the runner's process tree with signals (host.RunnerProcess.halt).
"""

from __future__ import annotations

import os
import re
import signal
import time
import uuid

# Threads and processes together: PyTorch's and OpenMP's pools take one thread per core each, and a
# kernel may bring an OpenMP runtime of its own beside PyTorch's.
MAX_TASKS = max(1024, 8 * (os.cpu_count() or 1))
# The memory group's hard limit above the memory limit the host's watch enforces: what may be
# allocated between two of its readings before the kernel steps in.
HARD_LIMIT_MARGIN = 1 << 30

_V1 = "/sys/fs/cgroup"
_V2_ROOT = "/sys/fs/cgroup"


class RunnerGroup:
    """One cgroup of one controller ("pids", "memory", "freezer" or "cpuacct"), made for one runner and
    removed with it."""

    def __init__(self, controller: str, path: str, v2: bool = False) -> None:
        self.controller, self.path, self.v2 = controller, path, v2

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
                return f"its processes could not be moved into a {self.controller} group ({exc.strerror})"
        return ""

    def bound(self, controller: str, value: int) -> str:
        """Set ``controller``'s bound ("pids": tasks, "memory": bytes) on this group: '' once set, else why not."""
        try:
            _write(os.path.join(self.path, _BOUND_FILES[controller, self.v2]), str(value))
        except OSError as exc:
            return f"the {controller} group's bound could not be set ({exc.strerror})"
        return ""

    def refused(self) -> int:
        """pids: how many threads or processes the kernel refused at the bound so far."""
        return self._stat("pids.events").get("max", 0)

    def killed_for_memory(self) -> int:
        """memory: how many of the group's processes the kernel killed at the hard limit."""
        return self._stat("memory.events" if self.v2 else "memory.oom_control").get("oom_kill", 0)

    def peak(self) -> int:
        """memory: the most the group was ever charged, in bytes (the page cache of its files included);
        0 where the kernel does not keep it."""
        try:
            with open(os.path.join(self.path, "memory.peak" if self.v2 else "memory.max_usage_in_bytes")) as f:
                return int(f.read().strip() or 0)
        except (OSError, ValueError):
            return 0

    def charged(self) -> int:
        """memory: the bytes of memory the group's processes hold that the kernel cannot just drop
        (anonymous and shared memory, memfd included; not the page cache of files read or written)."""
        if self.v2:
            stat = self._stat("memory.stat")
            return stat.get("anon", 0) + stat.get("shmem", 0)
        stat = self._stat("memory.stat")
        return stat.get("total_rss", 0) + stat.get("total_shmem", 0) + stat.get("total_swap", 0)

    def cpu_seconds(self) -> float | None:
        """cpuacct, or any v2 group: the CPU seconds the group's tasks used so far, those that exited
        included; None where it cannot be read."""
        if self.v2:
            usage = self._stat("cpu.stat").get("usage_usec")
            return None if usage is None else usage / 1e6
        try:
            with open(os.path.join(self.path, "cpuacct.usage")) as f:
                return int(f.read()) / 1e9
        except (OSError, ValueError):
            return None

    def freeze(self, timeout: float) -> bool:
        """freezer: stop every task of the group; whether all stood frozen within ``timeout`` seconds.
        Waited for by spinning (yielding the core): this is inside a timed window."""
        _write(os.path.join(self.path, "cgroup.freeze" if self.v2 else "freezer.state"), "1" if self.v2 else "FROZEN")
        start = time.monotonic()
        while not self._frozen():
            if time.monotonic() - start > timeout:
                return False
            os.sched_yield()
        return True

    def thaw(self) -> None:
        _write(os.path.join(self.path, "cgroup.freeze" if self.v2 else "freezer.state"), "0" if self.v2 else "THAWED")

    def _frozen(self) -> bool:
        if self.v2:
            return self._stat("cgroup.events").get("frozen") == 1
        with open(os.path.join(self.path, "freezer.state")) as f:
            return f.read().strip() == "FROZEN"

    def _stat(self, name: str) -> dict[str, int]:
        values = {}
        try:
            with open(os.path.join(self.path, name)) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if value.strip().isdigit():
                        values[key] = int(value)
        except OSError:
            pass
        return values

    def tasks(self) -> list[int]:
        try:
            with open(os.path.join(self.path, "cgroup.procs")) as f:
                return [int(line) for line in f if line.strip()]
        except (OSError, ValueError):
            return []

    def close(self) -> None:
        """Kill what is left in the group and remove it (a group with tasks cannot be removed). Where the
        kernel has cgroup.kill (v2, Linux 5.14), it kills them all at once, a fork on the way included;
        otherwise one by one until none is left. A frozen group is thawed first (its tasks die only then)."""
        if self.controller == "freezer" or self.v2:
            try:
                self.thaw()
            except OSError:
                pass
        try:
            with open(os.path.join(self.path, "cgroup.kill"), "w") as f:
                f.write("1")
        except OSError:
            pass
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


# A candidate reads its groups' names (/proc/self/cgroup): they name nothing of forge, so that a kernel
# cannot tell from them that it is being evaluated.
GROUP_PREFIX = "sb-"
_OURS = re.compile(r"(?:sb|forge)-[0-9a-f]{12}")  # the groups a host of this or an earlier version made


def make(controller: str, bound: int, name: str = "") -> tuple[RunnerGroup | None, str]:
    """A new group of ``controller`` ("pids": at most ``bound`` tasks; "memory": a hard limit of
    ``bound`` bytes; "freezer", "cpuacct": ``bound`` unused), or (None, why none could be made)."""
    where, v2, why = _parent(controller)
    if not where:
        return None, why
    _sweep(where)
    path = os.path.join(where, f"{GROUP_PREFIX}{name or uuid.uuid4().hex[:12]}")
    try:
        os.mkdir(path)
    except OSError as exc:
        return None, f"no {controller} group could be made in {where} ({exc.strerror})"
    group = RunnerGroup(controller, path, v2)
    if controller in ("freezer", "cpuacct"):  # nothing to set
        marker = {("freezer", False): "freezer.state", ("freezer", True): "cgroup.freeze",
                  ("cpuacct", False): "cpuacct.usage", ("cpuacct", True): "cpu.stat"}[controller, v2]  # fmt: skip
        if not os.path.exists(os.path.join(path, marker)):
            group.close()
            return None, f"no {controller} in {where}"
        return group, ""
    why_not = group.bound(controller, bound)
    if why_not:
        group.close()
        return None, why_not
    return group, ""


def hold_freezing() -> RunnerGroup | None:
    """An empty freezer group, frozen until it is closed (which thaws it first), or None where none can
    be made: held while the host stops and resumes its runners after every timed call on the CPU.

    cgroup v1's freezer turns a switch in the kernel (the freezer_active static key) on when the first
    group on the machine starts freezing and off when the last one thaws, and each turn rewrites the
    kernel's code on every processor (jump labels, by IPIs). While one group stays frozen, freezing or
    thawing another only counts. Without this group the runners paid unalike: while the reference was
    timed the candidate stood frozen, so the reference's stops only counted, and each of the candidate's
    turned the switch, twice per call. On a 2-core virtual machine (perf: the host's write to
    freezer.state in static_key_slow_inc/dec and text_poke) that was 0.22-0.24 ms more per call than
    the reference's, 0.9 ms beside two busy processes, and it depended on whether another evaluation on the
    machine held a group frozen; the host charged it all to the candidate's calls (2026-11-29)."""
    group, _ = make("freezer", 0)
    if group is None:
        return None
    if not group.freeze(1.0):  # an empty group is frozen at once; one that is not is of no use
        group.close()
        return None
    return group


def make_bounds(bounds: dict[str, int], pids: list[int]) -> tuple[dict[str, RunnerGroup], dict[str, str]]:
    """Groups that hold ``pids`` (a runner's processes, before any candidate code runs) to ``bounds``
    (controller -> bound, as ``make``), by controller; and per controller, why it has none ('' where
    it has one). On cgroup v2 a task is in one group only (entering a second takes it out of the
    first), so the bounds whose controllers are on v2 all go on one group."""
    groups: dict[str, RunnerGroup] = {}
    why: dict[str, str] = {}
    shared = None  # the runner's v2 group, once made
    for controller, bound in bounds.items():
        if shared is not None and on_v2(controller):
            group, why_not = shared, shared.bound(controller, bound)
        else:
            group, why_not = make(controller, bound)
            if group is not None:
                why_not = group.enter(pids)
        why[controller] = why_not
        if not why_not:
            groups[controller] = group
            shared = group if group.v2 else shared
    return groups, why


def on_v2(controller: str) -> bool:
    """Whether a group of ``controller`` that the host makes is a cgroup v2 group."""
    return _parent(controller)[1]


_BOUND_FILES = {("pids", False): "pids.max", ("pids", True): "pids.max",
                ("memory", False): "memory.limit_in_bytes", ("memory", True): "memory.max"}  # fmt: skip
LEFT_BEHIND_S = 3600  # an empty group this old was left by a host killed before it could remove it


def _sweep(where: str) -> None:
    """Remove the empty groups that hosts killed with -9 left behind (one a live host just made is
    younger, and removing a group with tasks fails)."""
    try:
        entries = [e for e in os.scandir(where) if _OURS.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for entry in entries:
        try:
            if time.time() - entry.stat().st_mtime > LEFT_BEHIND_S and not RunnerGroup("", entry.path).tasks():
                os.rmdir(entry.path)
        except OSError:
            continue


def _parent(controller: str) -> tuple[str, bool, str]:
    """Where the host may make a group of ``controller``, and whether it is cgroup v2: its own group in
    cgroup v1's hierarchy of that controller, or its own cgroup v2 group where the controller is
    delegated to its children."""
    own_v1, own_v2 = None, None
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controller in controllers.split(","):
                    own_v1 = (controllers, path)
                elif controllers == "":
                    own_v2 = path
    except (OSError, ValueError):
        return "", False, "the host's cgroups could not be read"
    if own_v1 is not None:
        for mount in (own_v1[0], controller):  # "cpu,cpuacct" may be mounted under either name
            group = os.path.join(_V1, mount) + own_v1[1].rstrip("/")
            if os.path.isdir(group):
                return group, False, ""
    if own_v2 is not None:
        group = _V2_ROOT + own_v2.rstrip("/")
        if controller in ("freezer", "cpuacct"):  # no controller: every v2 group but the root has
            return group, True, ""  # cgroup.freeze and cpu.stat
        try:
            with open(os.path.join(group, "cgroup.subtree_control")) as f:
                if controller in f.read().split():
                    return group, True, ""
        except OSError:
            pass
        return "", False, f"cgroup v2 without the {controller} controller delegated to the host's group"
    return "", False, f"no {controller} cgroup controller"


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
