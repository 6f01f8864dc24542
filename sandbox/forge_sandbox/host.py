"""The host's handle on one runner process: start it, talk to it, kill it.

The runner gets two private pipes (commands in, replies out) and a session of
its own, so a timeout can kill its whole process group: nvcc, ninja and
anything the candidate spawned. Its stdout and stderr go to a log file that is
read only as text for people and agents, never as a result. While the other
side is timed, every process of a runner can be stopped and its CPU time read
from outside (:meth:`RunnerProcess.pause`): no candidate thread, native or
not, runs while the reference is timed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field

import forge_sandbox
from forge_sandbox import protocol

LOG_TAIL_CHARS = 4000


class RunnerFailure(Exception):
    """The runner did not answer: it timed out, died, or broke the protocol."""

    def __init__(self, kind: str, message: str, log_tail: str = "") -> None:
        super().__init__(message)
        self.kind = kind  # "timeout" | "crashed" | "protocol"
        self.message = message
        self.log_tail = log_tail


def _signal_name(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


class RunnerProcess:
    def __init__(
        self,
        role: str,
        workdir: str,
        device: str,
        env: dict | None = None,
        prefix: list[str] | None = None,
        extra_args: list[str] | None = None,
        log_path: str | None = None,
        shared_fd: int = -1,
    ) -> None:
        """``prefix`` (isolation.isolation_prefix) starts the runner in namespaces of its own; ``env``
        is added to the runner's environment (child_environment); the log goes to ``log_path``
        (default: runner.log in ``workdir``); ``shared_fd``, the memory the host stages its timed inputs
        in (hosted_calls.SharedInputs), is inherited as ``--shared-fd``."""
        self.role = role
        self.isolated = bool(prefix)
        # What a reply may carry on the pipe after its JSON line: the trusted reference sends
        # what it computes; anyone else only as much as the host asked for (``request``), so
        # that an announcement cannot make the host buffer gigabytes.
        self.payload_limit: int | None = None if role == "reference" else 0
        # Inherited by everything the runner starts, so that strays can be found and
        # killed even after they leave the process group (setsid).
        self.token = uuid.uuid4().hex
        self.workdir = workdir
        os.makedirs(workdir, exist_ok=True)
        self.log_path = log_path or os.path.join(workdir, "runner.log")
        cmd_r, cmd_w = os.pipe()
        reply_r, reply_w = os.pipe()
        # In namespaces of its own nothing it starts can leave them (runner_processes finds them all),
        # so the token is only needed without them: then its environment names nothing of the evaluator's.
        child_env = child_environment(device, None if self.isolated else self.token, env)
        arguments = ["--cmd-fd", str(cmd_r), "--reply-fd", str(reply_w), "--workdir", workdir, "--device", device,
                     "--role", role, *(extra_args or []), *(["--shared-fd", str(shared_fd)] if shared_fd >= 0 else [])]  # fmt: skip
        program_r, program_w = os.pipe()
        # The host keeps its own descriptor and reads the log through it: the candidate may
        # replace the file's name with a FIFO or a link, never the file the host holds.
        self.log_fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(os.dup(self.log_fd), "wb") as log, os.fdopen(program_r, "rb") as program:
            # `python -`: the program comes on its standard input (runner_program), so its command line
            # names nothing of forge's either.
            self.proc = subprocess.Popen(
                [*(prefix or []), sys.executable, "-"],
                stdin=program,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(cmd_r, reply_w, *([shared_fd] if shared_fd >= 0 else [])),
                cwd=workdir,
                env=child_env,
                start_new_session=True,
            )
        _send_program(program_w, runner_program(arguments))
        os.close(cmd_r)
        os.close(reply_w)
        os.set_blocking(cmd_w, False)  # a runner that stops reading must not block the host
        self.cmd_fd = cmd_w
        if role == "reference":
            self.reader = protocol.LineReader(reply_r, alive=self._alive)
        else:
            self.reader = protocol.LineReader(reply_r, alive=self._alive, limit=protocol.UNTRUSTED_MESSAGE_BYTES,
                                              text_limit=protocol.UNTRUSTED_TEXT_CHARS)  # fmt: skip
        self.awaiting = False
        self.watch = None  # called while waiting for a reply; returns why the runner must die, or ''
        self.watch_failure = ""
        self.paused: set[int] = set()  # the processes ``pause`` stopped
        self.halted: set[int] = set()  # the processes ``halt`` stopped
        # The process that answers the host, and (isolated) the namespace's first one, its parent: both
        # named by ``worker_pid`` before any candidate code runs.
        self.worker, self.reaper = self.proc.pid, 0
        self.freezer = None  # a runner_cgroups.RunnerGroup of the freezer, once the host made one (halt)
        self.cpu_group = None  # one whose CPU time the host reads (cpuacct, or v2), once made (thread_times)

    def _alive(self) -> bool:
        if self.watch is not None and not self.watch_failure:
            self.watch_failure = self.watch()
            if self.watch_failure:
                self.kill()
        return self.proc.poll() is None

    def send(self, message: dict) -> None:
        """Send a command (or the next step of a timed block) without waiting for the reply."""
        self.check_quiet()
        try:
            protocol.write_message(self.cmd_fd, message, timeout=10.0)
        except protocol.ChannelTimeout:
            raise self._fail("protocol", "the runner stopped reading its commands") from None
        except OSError:
            raise self._fail("crashed", "the runner exited before it received a command") from None
        self.awaiting = True

    def send_word(self, word: bytes) -> None:
        """Write a timed call's word (hosted_calls.call_word) as it is: a few bytes, into a pipe the runner
        has read to its end (it answered every word before), so that it fits at once."""
        try:
            written = os.write(self.cmd_fd, word)
        except BlockingIOError:
            written = 0
        except OSError:
            raise self._fail("crashed", "the runner exited before it received a command") from None
        if written != len(word):
            raise self._fail("protocol", "the runner stopped reading its commands")

    def check_quiet(self) -> None:
        """RunnerFailure if the runner wrote anything nobody asked for yet (a forged reply, or an answer
        written ahead of the host's word)."""
        if self.reader.pending():
            raise self._fail("protocol", "the runner wrote a message nobody asked for (a forged reply?)")

    def wait_message(self, timeout: float, spin_s: float = 0.0) -> None:
        """Return once the runner's next message has arrived, read but not parsed (protocol.LineReader.
        wait_line), or RunnerFailure as ``read_message``."""
        with self._reading(timeout):
            self.reader.wait_line(timeout, spin_s)

    def read_message(self, timeout: float, spin_s: float = 0.0) -> dict:
        """The next message the runner sends (a reply, or a step of a timed block), or RunnerFailure;
        ``spin_s``: protocol.LineReader.read's."""
        with self._reading(timeout):
            return self.reader.read(timeout, spin_s)

    @contextlib.contextmanager
    def _reading(self, timeout: float):
        """What goes wrong reading from the runner, as RunnerFailure."""
        try:
            yield
        except protocol.ChannelTimeout:
            raise self._fail("timeout", f"no answer within {timeout:g} s") from None
        except protocol.ChannelClosed:
            if self.watch_failure:
                raise self._fail("limit", self.watch_failure) from None
            code = self._wait_exit(5.0)
            if self.isolated and code > 128:  # the namespace's reaper reports a signal as 128 + its number
                code = 128 - code
            raise self._fail("crashed", f"the process ended ({_signal_name(code)}) without answering") from None
        except protocol.ProtocolViolation as exc:
            raise self._fail("protocol", str(exc)) from None

    def receive(self, timeout: float) -> dict:
        """The reply to the last command, or RunnerFailure."""
        reply = self.read_message(timeout)
        # The watch at each reply too, not only between waits: a runner that always answers at once
        # never leaves the reader waiting.
        self._alive()
        if self.watch_failure:
            raise self._fail("limit", self.watch_failure)
        if "ok" not in reply:
            raise self._fail("protocol", "reply without an 'ok' field")
        size = reply.pop("payload_bytes", 0)
        if size:
            if not isinstance(size, int) or size < 0 or self.payload_limit == 0:
                raise self._fail("protocol", "the runner announced data on the pipe that the host did not ask for")
            if self.payload_limit is not None and size > self.payload_limit:
                raise self._fail(
                    "oversized",
                    f"the runner announced {size} bytes of outputs, more than the {self.payload_limit} "
                    "that the reference's outputs of these shapes take",
                )
            try:
                reply["payload"] = self.reader.read_exact(size, timeout)
            except (protocol.ChannelTimeout, protocol.ChannelClosed):
                raise self._fail("crashed", "the runner died while sending its outputs") from None
        self.awaiting = False
        return reply

    def request(self, message: dict, timeout: float, payload_limit: int = 0) -> tuple[dict, float]:
        """Send a command and wait for its reply; also return the host's wall time for it (s).

        A runner other than the reference may send at most ``payload_limit`` bytes after its reply."""
        if self.role != "reference":
            self.payload_limit = payload_limit
        start = time.perf_counter()
        self.send(message)
        try:
            reply = self.receive(timeout)
        finally:
            if self.role != "reference":
                self.payload_limit = 0
        return reply, time.perf_counter() - start

    # -- the quiet side -------------------------------------------------------------------

    def processes(self) -> list[int]:
        """Every live process of this runner: its process group, its PID namespace, its token."""
        return runner_processes(self.proc.pid, self.token)

    def pause(self) -> float:
        """Stop every process of the runner (through its freezer group, where it has one: a chain of
        short-lived processes, each forking the next, outruns any number of readings of /proc; else,
        or when the group does not freeze in time, SIGSTOP until no new one appears); return their CPU
        seconds so far, read from outside (``resume`` tells how much they used meanwhile)."""
        if self.freezer is not None and self.freezer.freeze(1.0):
            return self.cpu_time()  # frozen tasks never reach state T: no signals, no waiting for it
        stopped: set[int] = set()
        for _ in range(5):
            new = [pid for pid in self.processes() if pid not in stopped]
            if not new:
                break
            for pid in new:
                try:
                    os.kill(pid, signal.SIGSTOP)
                except OSError:
                    pass
                stopped.add(pid)
        self.paused = stopped
        _wait_stopped(stopped)  # a signal is delivered asynchronously: read the CPU time once all stand still
        return self.cpu_time()

    def cpu_time(self) -> float:
        """CPU seconds used so far by every process of the runner, read from outside it."""
        return self.thread_times().total

    def thread_times(self) -> ThreadTimes:
        """CPU time so far of every thread of every process of the runner, read from outside it; of forge's
        own processes in it, which each stop and resume wakes (isolated: the namespaces' starter and
        their first process, the reaper of isolation.settle), only the time of the processes they
        reaped (orphans, and children made as the worker's siblings). With a cpu group, also the time of
        every task it ever held (a child the kernel reaped itself included)."""
        grouped = self.cpu_group.cpu_seconds() if self.cpu_group is not None else None
        return ThreadTimes.read(self.processes(), forges=self._forges(), grouped_s=grouped)

    def own_processes(self) -> list[int]:
        """The runner's processes less forge's own (isolated: the namespaces' starter and their reaper,
        once ``worker_pid`` named them): what the runner's groups hold (runner_cgroups), so that
        stopping it costs what its own processes cost, as the reference's one process does."""
        forges = self._forges()
        return [pid for pid in self.processes() if pid not in forges]

    def _forges(self) -> tuple[int, ...]:
        return (self.reaper, self.proc.pid) if self.worker != self.proc.pid else ()

    def resume(self, cpu_before: float) -> float:
        """SIGCONT what ``pause`` stopped; return the CPU seconds its processes used while paused."""
        used = self.cpu_time() - cpu_before
        _send(self.paused, signal.SIGCONT)
        self.paused = set()
        if self.freezer is not None:
            self.freezer.thaw()
        return max(0.0, used)

    def halt(self, timeout: float = 1.0) -> None:
        """Stop every process of the runner: what the host does after each timed call on the CPU
        (hosted_calls). With a freezer group (runner_cgroups), all of its tasks at once: one forked
        meanwhile is born frozen, and no signal thaws it. Without one, the runner's worker and every
        process under it, each read for its children once it stands still, pass after pass until one
        finds every process stopped and none new (a process that resumes another, or one forked as
        another's sibling, is stopped again or found by the next pass; seccomp refuses CLONE_PARENT),
        a few system calls a process where ``pause`` reads all of /proc. An isolated runner's orphans
        come to its namespace's first process (forge's), whose children are read each pass; a stray
        that a runner without namespaces double-forked leaves the tree. Not all stopped within
        ``timeout``: RunnerFailure (the runner is killed)."""
        if self.freezer is not None:
            if not self.freezer.freeze(timeout):
                raise self._fail(
                    "limit", f"its processes could not all be frozen within {timeout:g} s after a timed call"
                )
            return
        deadline = time.monotonic() + timeout
        while True:
            moved, seen = False, set()
            todo = [self.worker]
            while todo:
                pid = todo.pop()
                if pid in seen:
                    continue
                seen.add(pid)
                if not _all_stopped(pid):
                    try:
                        os.kill(pid, signal.SIGSTOP)
                    except OSError:
                        continue
                    moved = True
                    # Briefly: another process may be resuming this one; stopped too, the next pass settles it.
                    _wait_stopped({pid}, 0.01, threads=True)
                self.halted.add(pid)
                todo.extend(_children(pid))
                if not todo and self.reaper:
                    # Forge's reaper is not stopped (waking it for nothing would charge the candidate).
                    todo.extend(c for c in _children(self.reaper) if c not in seen)
            if not moved:
                return
            if time.monotonic() > deadline:
                raise self._fail("limit", f"its processes could not all be stopped within {timeout:g} s after a timed "
                                 "call (one resumed another, or would not stop)")  # fmt: skip

    def release(self) -> None:
        """Resume what ``halt`` stopped."""
        if self.freezer is not None:
            self.freezer.thaw()
            return
        _send(self.halted, signal.SIGCONT)
        self.halted = set()

    def worker_pid(self, own_pid: int) -> int:
        """The host's PID of the process that answers the host: the one whose PID in its own namespace is
        ``own_pid`` (what it said before any candidate code ran), or the process started, unisolated."""
        if not self.isolated:
            return self.proc.pid
        for pid in self.processes():
            try:
                with open(f"/proc/{pid}/status") as f:
                    fields = dict(line.split(":", 1) for line in f if ":" in line)
            except OSError:
                continue
            ids = fields.get("NSpid", "").split()
            if len(ids) > 1 and ids[-1] == str(own_pid):
                self.worker, self.reaper = pid, int(fields.get("PPid", "0").split()[0] or 0)
                return pid
        raise RunnerFailure("protocol", f"no process of the runner has PID {own_pid} in its namespace")

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        return tail_of(self.log_fd, chars)

    def _wait_exit(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.proc.wait()

    def _fail(self, kind: str, message: str) -> RunnerFailure:
        self.kill()
        if self.watch_failure:  # whatever the host was doing when a watch killed the runner, that is why
            kind, message = "limit", self.watch_failure
        return RunnerFailure(kind, message, self.log_tail())

    def kill(self) -> None:
        """Kill the whole process group (compilers and anything the candidate started), and strays."""
        kill_group_and_strays(self.proc.pid, self.token)
        if self.freezer is not None:
            try:
                self.freezer.thaw()  # a frozen task dies of SIGKILL only once thawed
            except OSError:
                pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        """Ask the runner to exit, then make sure nothing of its group survives."""
        if self.proc.poll() is None and not self.awaiting:
            try:
                protocol.write_message(self.cmd_fd, {"op": "exit"}, timeout=5.0)
                self.proc.wait(10)
            except (OSError, protocol.ChannelTimeout, subprocess.TimeoutExpired):
                pass
        self.kill()
        for fd in (self.cmd_fd, self.reader.fd, self.log_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log_fd = -1  # its number may be reused: log_tail now reads nothing


def tail_of(fd: int, chars: int) -> str:
    """The last ``chars`` bytes of an open regular file, read without moving anyone's offset."""
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - chars)
        return os.pread(fd, size - start, start).decode(errors="replace")
    except OSError:
        return ""


class UnsafeFile(Exception):
    """A file a candidate could have written is not a plain regular file (or is too big)."""


def open_regular_file(path: str) -> int:
    """Open a file a candidate may have replaced, for reading: never through a link, never a FIFO
    or a device (which could block the host or feed it forever). Returns the descriptor."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise UnsafeFile(exc.strerror) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeFile("not a regular file")
    return fd


def read_tail(path: str, chars: int) -> str:
    """The last ``chars`` bytes of a file a candidate may have replaced, or "" when it is unsafe."""
    try:
        fd = open_regular_file(path)
    except UnsafeFile:
        return ""
    try:
        return tail_of(fd, chars)
    finally:
        os.close(fd)


# What a runner's environment keeps of the host's: the paths, locale, compilers and CUDA. Nothing
# else passes (no API keys, nothing that names the evaluator): a kernel that behaves differently
# under forge than in a user's model would have nothing to tell the two apart by.
_KEPT_VARIABLES = {
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH",
    "CC", "CXX", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "TORCH_CUDA_ARCH_LIST",
    "MAX_JOBS", "TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH", "TRITON_LIBCUDA_PATH",
    "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "CUPY_CACHE_DIR", "CUDA_CACHE_PATH", "XDG_CACHE_HOME",
    "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "TMPDIR",
}  # fmt: skip
_KEPT_PREFIXES = ("LC_", "NVIDIA_")
TOKEN_VARIABLE = "RUN_TOKEN"


def sandbox_root() -> str:
    """The folder forge_sandbox is imported from."""
    return os.path.dirname(os.path.dirname(os.path.abspath(forge_sandbox.__file__)))


def runner_program(arguments: list[str]) -> str:
    """What a runner's interpreter runs, read from its standard input: forge_sandbox importable, then
    runner.main with ``arguments``. A candidate reads its process's command line (sys.argv,
    /proc/self/cmdline, its namespace's first process's) as ``python -``: a kernel that is right only
    where it sees it is evaluated has nothing to see there."""
    return (
        # `python -` puts the working folder first on sys.path: off before anything is imported from it
        'import sys\nif sys.path[:1] == [""]:\n    del sys.path[0]\n'
        f"sys.path.insert(0, {sandbox_root()!r})\n"
        f"from forge_sandbox.runner import main\nmain({arguments!r})\n"
    )


def _send_program(write_end: int, program: str) -> None:
    """Write ``program`` to a started runner's standard input and close it (written after the start:
    a pipe may hold a single page, where a user has many pipes open). A runner that died first
    fails at its first command instead."""
    data = memoryview(program.encode())
    try:
        while data:
            data = data[os.write(write_end, data) :]
    except BrokenPipeError:
        pass
    finally:
        os.close(write_end)


def child_environment(device: str, token: str | None, env: dict | None = None, importable: bool = False) -> dict:
    """The environment of a runner or a profiled process: the kept part of the host's, then ``env``,
    forge_sandbox importable through PYTHONPATH only with ``importable`` (a runner's program imports it
    itself: runner_program), and the token that finds its strays (when given)."""
    child_env = {k: v for k, v in os.environ.items() if k in _KEPT_VARIABLES or k.startswith(_KEPT_PREFIXES)}
    child_env.update(env or {})
    if importable:
        child_env["PYTHONPATH"] = os.pathsep.join(p for p in (sandbox_root(), child_env.get("PYTHONPATH", "")) if p)
    if device == "cpu":
        child_env["TRITON_INTERPRET"] = "1"  # must be set before triton is imported
    if importable:
        # `python -m` (the profiled process) would put the working folder first on sys.path, and another
        # evaluation's candidate could drop a module there that forge's code then imports. A runner's
        # program takes it off itself (runner_program): the variable, and the flag it sets
        # (sys.flags.safe_path), would tell a kernel from a user's process where it is evaluated.
        child_env["PYTHONSAFEPATH"] = "1"
    # The token first: _token_holders reads only the start of each process's environment.
    return {TOKEN_VARIABLE: token, **child_env} if token else child_env


def kill_group_and_strays(pid: int, token: str) -> None:
    """SIGKILL a process group and every process carrying ``token`` that left it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _kill_token_holders(token)


def _kill_token_holders(token: str) -> None:
    """SIGKILL every process whose environment carries the runner's token (Linux /proc)."""
    for pid in _token_holders(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


def _proc_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != os.getpid()]
    except OSError:
        return []


# How much of a process's environment _token_holders reads: the token comes first in a runner's
# (child_environment), and a process that moved it further could as well have dropped it. Reading all
# of it let a candidate's processes with environments of megabytes hold the host's scans (and Python's
# lock) for milliseconds each, many times a second (a review, 2026-11-26).
ENVIRON_READ_BYTES = 4096


def _token_holders(token: str) -> list[int]:
    marker = f"\0{TOKEN_VARIABLE}={token}\0".encode()
    found = []
    for pid in _proc_pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker in b"\0" + f.read(ENVIRON_READ_BYTES):
                    found.append(pid)
        except OSError:
            continue
    return found


def _stat_fields(pid: int, tid: int | None = None) -> list[str]:
    """/proc/PID/stat (or a thread's, /proc/PID/task/TID/stat) after the command name (which may
    hold spaces): field 3 (state) comes first."""
    with open(f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat", "rb") as f:
        data = f.read()
    return data[data.rindex(b")") + 2 :].decode().split()


def runner_processes(leader: int, token: str) -> list[int]:
    """The processes of the runner started as ``leader``: its process group, every process in the
    PID namespace of its children (a candidate cannot leave that one), and the token's holders."""
    found = {leader}
    namespaces = set()
    pids = _proc_pids()
    try:
        own_namespace = os.readlink(f"/proc/{leader}/ns/pid")
    except OSError:
        own_namespace = None
    for pid in pids:
        try:
            fields = _stat_fields(pid)
            if int(fields[2]) == leader:  # field 5: the process group
                found.add(pid)
                if int(fields[1]) == leader:  # field 4: the parent; unshare's child is the namespace's PID 1
                    namespace = os.readlink(f"/proc/{pid}/ns/pid")
                    if namespace != own_namespace:
                        namespaces.add(namespace)
        except (OSError, ValueError, IndexError):
            continue
    if namespaces:
        for pid in pids:
            try:
                if os.readlink(f"/proc/{pid}/ns/pid") in namespaces:
                    found.add(pid)
            except OSError:
                continue
    found.update(_token_holders(token))
    return sorted(found)


def _wait_stopped(pids: set[int], timeout: float = 1.0, threads: bool = False) -> None:
    """Until every one of ``pids`` is stopped (state T), has exited, or ``timeout`` passes. With
    ``threads``, every thread of each (a group stop reaches each thread on its own way back to user
    space). Never sleeping, only yielding the core: ``halt`` waits inside a timed window."""
    start = time.monotonic()
    waiting = {(pid, tid) for pid in pids for tid in (_tids(pid) if threads else [None])}
    while waiting and time.monotonic() - start < timeout:
        waiting = {(pid, tid) for pid, tid in waiting if not _stands_still(pid, tid)}
        if waiting:
            os.sched_yield()


def _all_stopped(pid: int) -> bool:
    """Whether every thread of ``pid`` stands stopped (or the process is gone)."""
    return all(_stands_still(pid, tid) for tid in _tids(pid))


def _stands_still(pid: int, tid: int | None) -> bool:
    """Whether a process (or one of its threads) is stopped, or gone."""
    try:
        return _stat_fields(pid, tid)[0] in ("T", "t", "X", "Z")
    except (OSError, IndexError):
        return True


def _send(pids, sig: int) -> None:
    """``sig`` to each of ``pids``; one gone meanwhile is no error."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _tids(pid: int) -> list[int | None]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        return [None]


def _children(pid: int) -> list[int]:
    """The children of every thread of ``pid`` (/proc/PID/task/TID/children)."""
    found = []
    for tid in _tids(pid):
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(c) for c in f.read().split()]
        except (OSError, ValueError, TypeError):
            continue
    return found


_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ThreadTimes:
    """CPU seconds per thread (``/proc/PID/task/TID/schedstat``, in nanoseconds) and of reaped children:
    the host's one reading of a runner's CPU time (``total``: whether a paused runner stayed quiet).

    Two readings also tell how many cores a runner kept busy at once in a way the load of the
    machine does not change: the total over the busiest thread. When other work shares the
    cores, every busy thread of the runner gets less, but the ratio stays.
    """

    threads: dict[tuple[int, int], float]
    reaped_s: float
    # Per process, its own count (/proc/PID/stat, in clock ticks): it keeps the time of threads that
    # have exited, which no per-thread reading shows (a thread started and joined inside each call).
    processes: dict[int, float] = field(default_factory=dict)
    # The runner's cpu group's count (runner_cgroups.RunnerGroup.cpu_seconds; forge's own processes are
    # not in the group): it keeps the time of processes that no reading of /proc or of a parent shows, a
    # child the kernel reaped itself (SIGCHLD ignored) among them. None without a group.
    grouped_s: float | None = None

    @classmethod
    def read(cls, pids: list[int], forges: tuple[int, ...] = (), grouped_s: float | None = None) -> ThreadTimes:
        """``forges``: processes of forge's whose own time is not the runner's, only their children's;
        ``grouped_s``: the runner's cpu group's count, read before (so never short of the threads' own)."""
        threads: dict[tuple[int, int], float] = {}
        processes: dict[int, float] = {}
        reaped = 0
        for pid in pids:
            try:
                fields = _stat_fields(pid)
                reaped += int(fields[13]) + int(fields[14])  # cutime, cstime
                if pid in forges:
                    continue
                processes[pid] = (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
                tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
            except (OSError, ValueError, IndexError):
                continue
            for tid in tids:
                seconds = _thread_seconds(pid, tid)
                if seconds is not None:
                    threads[(pid, tid)] = seconds
        return cls(threads, reaped / _TICK, processes, grouped_s)

    @property
    def total(self) -> float:
        """CPU seconds of every thread so far, and of the children reaped."""
        seen = max(sum(self.threads.values()), sum(self.processes.values())) + self.reaped_s
        return seen if self.grouped_s is None else max(seen, self.grouped_s)

    def since(self, before: ThreadTimes) -> tuple[float, float]:
        """(total CPU seconds, the busiest thread's) between ``before`` and this reading; the total counts
        threads that exited meanwhile and reaped children too."""
        deltas = [max(0.0, s - before.threads.get(key, 0.0)) for key, s in self.threads.items()]
        reaped = max(0.0, self.reaped_s - before.reaped_s)
        if self.grouped_s is not None and before.grouped_s is not None:
            # The group's count is the scheduler's own, in nanoseconds, and keeps what exited threads used.
            return max(sum(deltas) + reaped, self.grouped_s - before.grouped_s), max(deltas, default=0.0)
        # A process's own count is utime + stime, each the scheduler's count scaled and floored to a clock
        # tick: a difference of two readings runs up to two ticks long (1.3 ticks measured on an honest
        # block, 2026-12-04, which read as work beside its one thread).
        by_process = sum(max(0.0, s - before.processes.get(pid, 0.0) - 2 / _TICK) for pid, s in self.processes.items())
        total = max(sum(deltas), by_process) + reaped
        return total, max(deltas, default=0.0)


def _thread_seconds(pid: int, tid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:  # kernels without schedstat: the thread's own utime + stime, in clock ticks
        fields = _stat_fields(pid, tid)
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, ValueError, IndexError):
        return None


# How often a ResourceWatch reads a candidate runner's memory and tasks, by default.
WATCH_EVERY_S = 0.05


class ResourceWatch:
    """A thread of the host's that kills a runner once its processes hold more memory, or more threads
    and processes, than allowed.

    No limit inside the runner would do: CUDA reserves far more address space than it uses, and a
    candidate may start processes of its own. So the host reads what every process of the runner
    keeps resident, and how many tasks they run, every ``every_s``, whatever the host is doing
    meanwhile, and kills the runner before the machine runs out (the kernel's OOM killer picks its
    victim, which may be anyone; a machine out of process IDs starts nothing). Where the kernel
    bounds the tasks itself (runner_cgroups), this count is the second line; where it charges the
    runner's memory to a group of its own, ``charged`` reads it (memory no process maps included)."""

    def __init__(
        self,
        runner: RunnerProcess,
        limit_bytes: int | None,
        max_tasks: int | None,
        every_s: float | None = None,
        processes=None,
    ) -> None:
        """``None`` for a limit: that one is not enforced, only what the runner held is kept (``peak``).
        ``processes``: what to read in place of every process of the runner (its own first process alone,
        for a trusted runner that starts none, so that the watch costs one read, not a scan of /proc)."""
        self.runner, self.limit, self.max_tasks = runner, limit_bytes, max_tasks
        self.every_s = every_s or WATCH_EVERY_S
        self.processes = processes or runner.processes
        self.peak = 0  # the most memory its processes were seen to hold, in bytes
        self.charged = lambda: 0  # set once the runner is in a memory group (runner_cgroups)
        self.unmapped = lambda: 0  # memory of the host's that the runner can fill without mapping it (hosted_calls)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="forge-resource-watch", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(self.every_s):
            resident, tasks = resident_and_tasks(self.processes())
            used = max(resident + self.unmapped(), self.charged())
            self.peak = max(self.peak, used)
            if self.limit is not None and used > self.limit:
                held = f"held {used / 2**30:.1f} GiB of memory, more than the {self.limit / 2**30:.1f} GiB allowed"
            elif self.max_tasks is not None and tasks > self.max_tasks:
                held = f"ran {tasks} threads and processes, more than the {self.max_tasks} allowed"
            else:
                continue
            self.runner.watch_failure = f"its processes {held}; the process group was killed"
            self.runner.kill()
            return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def resident_and_tasks(pids: list[int]) -> tuple[int, int]:
    """The memory the processes keep resident (their RSS, summed) and their threads, all together (a
    process is one thread or more), from one read of each one's /proc stat."""
    resident = tasks = 0
    for pid in pids:
        try:
            fields = _stat_fields(pid)
            tasks += int(fields[17])  # field 20: num_threads
            resident += int(fields[21]) * _PAGE_SIZE  # field 24: rss, in pages
        except (OSError, ValueError, IndexError):
            continue  # gone
    return resident, tasks


def oom_kills() -> int | None:
    """How many processes the kernel's OOM killer has ended since the machine started (/proc/vmstat),
    or None where it does not say."""
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def machine_memory() -> int | None:
    """The machine's memory in bytes (MemTotal), or None where /proc/meminfo does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def default_memory_limit() -> int:
    """Half of the machine's memory: the candidate's runner may never take the host down."""
    total = machine_memory()
    return total // 2 if total else 8 * 2**30
