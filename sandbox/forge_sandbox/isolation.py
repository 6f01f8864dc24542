"""Namespaces for the candidate's process: it cannot see or signal forge's processes, nor reach a network.

The candidate's runner starts under ``unshare`` (util-linux) in new user, PID,
mount and network namespaces, with the user mapped to itself: inside, it is
PID 2 under a reaper (see runner.py), ``/proc`` shows only its own processes,
there is no network but a down loopback, and a process outside (the host, the
reference runner, the user's shell) has no PID it could name. Killing the
namespace's first process kills everything in it, so nothing it starts
outlives its evaluation. What this does not do: take away the user's file
rights (the user is mapped to itself; an unprivileged user cannot map to
another without newuidmap), so the static check still rejects file tricks.

Where user namespaces are off (a sysctl, a container's seccomp profile) or
``unshare`` is missing, evaluations go on without it and say so.
"""

from __future__ import annotations

import shutil
import subprocess

# --kill-child: if unshare itself dies, its child gets SIGKILL; --mount-proc implies a mount namespace.
_NAMESPACES = ["--pid", "--fork", "--kill-child", "--mount-proc", "--net"]
_USER_MAPS = (["--user", "--map-current-user"], ["--user", "--map-root-user"])  # -c needs util-linux 2.38

_probed: tuple[list[str], str | None] | None = None


def isolation_prefix() -> tuple[list[str], str | None]:
    """The command prefix that isolates a process, or ([], why not). Probed once per process."""
    global _probed
    if _probed is None:
        _probed = _probe()
    return _probed


def _probe() -> tuple[list[str], str | None]:
    unshare = shutil.which("unshare")
    if unshare is None:
        return [], "unshare (util-linux) is not installed"
    error = ""
    for user_map in _USER_MAPS:
        prefix = [unshare, *user_map, *_NAMESPACES]
        try:
            done = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return [], f"unshare could not run ({exc})"
        if done.returncode == 0:
            return prefix, None
        error = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return [], f"user namespaces are not available here ({error[:200]})"
