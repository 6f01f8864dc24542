"""The host's handle on one runner process: start it, talk to it, kill it.

The runner gets two private pipes (commands in, replies out) and a session of
its own, so a timeout can kill its whole process group: nvcc, ninja and
anything the candidate spawned. Its stdout and stderr go to a log file that is
read only as text for people and agents, never as a result.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
import uuid

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
    ) -> None:
        """``prefix`` (isolation.isolation_prefix) starts the runner in namespaces of its own."""
        self.role = role
        self.isolated = bool(prefix)
        # Only the trusted reference sends outputs on the pipe; an announcement from
        # anyone else could make the host buffer gigabytes.
        self.accept_payload = role == "reference"
        # Inherited by everything the runner starts, so that strays can be found and
        # killed even after they leave the process group (setsid).
        self.token = uuid.uuid4().hex
        self.workdir = workdir
        os.makedirs(workdir, exist_ok=True)
        self.log_path = os.path.join(workdir, "runner.log")
        cmd_r, cmd_w = os.pipe()
        reply_r, reply_w = os.pipe()
        child_env = child_environment(device, self.token, env)
        # The host keeps its own descriptor and reads the log through it: the candidate may
        # replace the file's name with a FIFO or a link, never the file the host holds.
        self.log_fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(os.dup(self.log_fd), "wb") as log:
            self.proc = subprocess.Popen(
                [
                    *(prefix or []),
                    sys.executable,
                    "-m",
                    "forge_sandbox.runner",
                    "--cmd-fd",
                    str(cmd_r),
                    "--reply-fd",
                    str(reply_w),
                    "--workdir",
                    workdir,
                    "--device",
                    device,
                    *(extra_args or []),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(cmd_r, reply_w),
                cwd=workdir,
                env=child_env,
                start_new_session=True,
            )
        os.close(cmd_r)
        os.close(reply_w)
        os.set_blocking(cmd_w, False)  # a runner that stops reading must not block the host
        self.cmd_fd = cmd_w
        self.reader = protocol.LineReader(reply_r, alive=lambda: self.proc.poll() is None)
        self.awaiting = False

    def send(self, message: dict) -> None:
        """Send a command without waiting (so the host can work while a candidate compiles)."""
        if self.reader.pending():
            raise self._fail("protocol", "the runner wrote a message nobody asked for (a forged reply?)")
        try:
            protocol.write_message(self.cmd_fd, message, timeout=10.0)
        except protocol.ChannelTimeout:
            raise self._fail("protocol", "the runner stopped reading its commands") from None
        except OSError:
            raise self._fail("crashed", "the runner exited before it received a command") from None
        self.awaiting = True

    def receive(self, timeout: float) -> dict:
        """The reply to the last command, or RunnerFailure."""
        try:
            reply = self.reader.read(timeout)
        except protocol.ChannelTimeout:
            raise self._fail("timeout", f"no answer within {timeout:g} s") from None
        except protocol.ChannelClosed:
            code = self._wait_exit(5.0)
            if self.isolated and code > 128:  # the namespace's reaper reports a signal as 128 + its number
                code = 128 - code
            raise self._fail("crashed", f"the process ended ({_signal_name(code)}) without answering") from None
        except protocol.ProtocolViolation as exc:
            raise self._fail("protocol", str(exc)) from None
        if "ok" not in reply:
            raise self._fail("protocol", "reply without an 'ok' field")
        size = reply.pop("payload_bytes", 0)
        if size:
            if not self.accept_payload or not isinstance(size, int) or size < 0:
                raise self._fail("protocol", "the runner announced data on the pipe, which only the reference may send")
            try:
                reply["payload"] = self.reader.read_exact(size, timeout)
            except (protocol.ChannelTimeout, protocol.ChannelClosed):
                raise self._fail("crashed", "the runner died while sending its outputs") from None
        self.awaiting = False
        return reply

    def request(self, message: dict, timeout: float) -> tuple[dict, float]:
        """Send a command and wait for its reply; also return the host's wall time for it (s)."""
        start = time.perf_counter()
        self.send(message)
        reply = self.receive(timeout)
        return reply, time.perf_counter() - start

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
        return RunnerFailure(kind, message, self.log_tail())

    def kill(self) -> None:
        """Kill the whole process group (compilers and anything the candidate started), and strays."""
        kill_group_and_strays(self.proc.pid, self.token)
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


def child_environment(device: str, token: str, env: dict | None = None) -> dict:
    """The environment of a process that runs candidate code: forge_sandbox importable, and the token."""
    child_env = dict(os.environ if env is None else env)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(forge_sandbox.__file__)))
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, child_env.get("PYTHONPATH", "")) if p)
    if device == "cpu":
        child_env["TRITON_INTERPRET"] = "1"  # must be set before triton is imported
    child_env["FORGE_RUNNER_TOKEN"] = token
    # `python -m` would put the working folder first on sys.path, and another evaluation's
    # candidate could drop a module there that a trusted runner then imports.
    child_env["PYTHONSAFEPATH"] = "1"
    return child_env


def kill_group_and_strays(pid: int, token: str) -> None:
    """SIGKILL a process group and every process carrying ``token`` that left it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _kill_token_holders(token)


def _kill_token_holders(token: str) -> None:
    """SIGKILL every process whose environment carries the runner's token (Linux /proc)."""
    marker = f"FORGE_RUNNER_TOKEN={token}".encode()
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker not in f.read().split(b"\0"):
                    continue
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
