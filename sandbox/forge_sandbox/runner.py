"""A runner process: runs a task's reference or a candidate on the host's command.

Started by the host as ``python -`` running ``main(["--role", "reference|candidate",
"--cmd-fd", R, "--reply-fd", W, "--workdir", D, "--device", DEV])`` (host.runner_program)
in a new session (so a timeout kills its whole process group, compilers included). It reads one JSON
command at a time and answers with one JSON reply; tensors follow a reply on
the same pipe (``payload``), inputs travel as files the reference writes.

The role is fixed at start: :class:`~forge_sandbox.reference_runner.ReferenceRunner`
(trusted, task code only) or :class:`~forge_sandbox.candidate_runner.CandidateRunner`
(untrusted code: nothing it says is believed without a check on the host).
What both do alike, running a model on verification inputs and timing it, is
:class:`ModelHarness` here.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import gc
import json
import os
import resource
import sys
import threading
import time
import traceback

import torch

from forge_sandbox import hosted_calls, op_census, protocol, taskfile, timing, variants

# The most a candidate's process may write into one file (its log included): a full disk or a
# RAM-backed folder filled to the brim harms the host, and no build product comes near this.
CANDIDATE_FILE_LIMIT = 2 * 2**30


def _own_memory(values: list) -> list:
    """Each tensor of ``values`` copied into memory of PyTorch's allocator (resizable, as a user's is), as
    it was laid out."""
    out = []
    for x in values:
        if isinstance(x, torch.Tensor) and not x.is_sparse:
            copy = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=x.device).copy_(x)
            x = copy.requires_grad_(x.requires_grad) if x.is_floating_point() else copy
        out.append(x)
    return out


def to_device(values: list, device: torch.device) -> list:
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def cpu(x):
    return x.detach().cpu() if isinstance(x, torch.Tensor) else x


class ModelHarness:
    """One model on the device, its verification inputs and its timing pool; what both roles run."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.model = None
        self.trials: list[list] = []  # one group's verification inputs, on the device, in their variant's layout
        self.variants: list[str] = []  # the variant of each of them (variants.py)
        self.first_trial: list = []  # the configuration's first trial (the task's own inputs), kept for later
        self.pool: list[list] = []  # timing inputs, on the device
        self.kept: list = []  # the last outputs of the last timed block, until the host fetches them
        self.last_output = None  # hosted: the last call's output, until the host has read it
        self.shared_fd = -1  # the memory the host stages timed inputs in (hosted_calls; the CPU's)
        self.shared: list[list] = []  # its two sets of input tensors, once the host laid them out
        self.mapping = None

    def load_pool(self, pool: list[list]) -> None:
        """A new configuration's timing inputs; its verification trials come in groups (load_trials)."""
        self.pool = [to_device(s, self.device) for s in pool]
        self.trials, self.variants, self.first_trial = [], [], []

    def load_trials(self, trials: list[list], variant_names: list[str], staged: list[bool] | None = None) -> None:
        """One group of verification trials, in place of the last; the configuration's first trial is
        kept (a standard one, made again after new weights, profiled and split: its inputs alone).

        On the CPU, where timed inputs lie in memory the host stages (hosted_calls), each trial's inputs
        lie either there too or, where ``staged`` says not (variants.in_staged_memory), in memory of
        PyTorch's allocator, as a user's tensors do: each kind of memory has properties a kernel can read
        (a storage that can be resized, or not), and a kernel right on one kind alone passed, 2026-11-28
        (on the allocator's) and 2026-11-29 (on the host's)."""
        self.variants = list(variant_names)
        if self.device.type == "cpu":
            trials = [hosted_calls.laid_out_as_staged(s) if staged is None or staged[k] else _own_memory(s)
                      for k, s in enumerate(trials)]  # fmt: skip
        self.trials = [variants.apply_layout(to_device(s, self.device), v) for s, v in zip(trials, variant_names)]
        if not self.first_trial and self.trials:
            self.first_trial = self.trials[0]

    def share_inputs(self, layout: list) -> None:
        """Map the two sets of timed inputs the host stages (hosted_calls.SharedInputs.place); what is
        not a tensor there is the pool's value."""
        if self.shared_fd < 0:
            raise RuntimeError("the host gave this runner no shared memory")
        self.mapping, sets = hosted_calls.map_inputs(self.shared_fd, layout)
        self.shared = [[p if t is None else t for t, p in zip(s, self.pool[0])] for s in sets]

    def forward(
        self, model, inputs: list, census: bool, grad: bool = False
    ) -> tuple[object, op_census.OpRecorder | None]:
        """One forward pass (synchronized), under ``torch.no_grad`` unless ``grad``; with ``census``, the
        record of the operators it dispatched, and with the memory PyTorch hands out filled
        (variants.fresh_memory_filled), on both sides alike."""
        with torch.set_grad_enabled(grad):
            if not census:
                out = model(*inputs)
                sync(self.device)
                return out, None
            with variants.fresh_memory_filled(), op_census.OpRecorder() as recorder:
                out = model(*inputs)
                sync(self.device)
            return out, recorder

    def kept_payload(self) -> bytes:
        """The kept outputs of the last timed block, copied now, for the host."""
        return protocol.tensors_to_bytes([None if t is None else cpu(t).clone() for t in self.kept])

    def _time_hosted_block(self, model, msg: dict, channel: Channel, hold_outputs: bool) -> dict:
        """One timed block of ``msg["calls"]`` calls whose inputs the host stages and whose outputs it
        reads (hosted_calls): the host stops this process after each call. The outputs are held until the
        host's next word, the last ``keep_last`` to the block's end (it reads them again then: a kernel
        that writes every result into one buffer shows it); the census as in ``time_block``."""
        n = int(msg["calls"])
        keep_from = n - msg.get("keep_last", 0)
        kept: list = []
        # The last outputs, this call's among them, held through the block on both sides alike: their
        # memory is not free for a later output (the host checks that none comes from it).
        holding: collections.deque = collections.deque(maxlen=max(int(msg.get("hold_last", 1)), 1))
        ops: dict[int, op_census.OpRecorder] = {}

        loop_start = [0]  # when this loop had the current call's word

        def start_call(i: int):
            word = channel.receive_word()
            loop_start[0] = time.monotonic_ns()
            got, which, census = word.split()
            if int(got) != i or which not in (b"0", b"1"):
                raise RuntimeError(f"the host's word for call {i} was {word!r}")
            if census != b"1":
                return which == b"1", _NO_CENSUS
            ops[i] = recorder = op_census.OpRecorder()
            return which == b"1", recorder

        def end_call(i: int, ms: float, out, span: list[int]) -> None:
            # Held until the next call's end (the host has read this one before its next word), the
            # block's last until the next block: the host may read it after this process goes on.
            self.last_output = out
            holding.append(out)
            if i >= keep_from and hold_outputs:
                kept.append(out)
            # The answer last: the host stops this process once it has it, which takes a clock tick or
            # more where a thread is still running, so nothing else is left to do by then. It says when
            # this loop had the word and began to answer (the reference's show the host what its window
            # holds besides a runner's own steps: Benchmark._figures).
            channel.answer(hosted_calls.call_answer(i, ms, span, [loop_start[0], time.monotonic_ns()], out))

        channel.send({"ready": 0})
        # No garbage collection inside the block: a pass that starts after the answer (the Triton
        # interpreter leaves much garbage) would keep this process running when the host stops it.
        collecting = gc.isenabled()
        gc.disable()
        try:
            times = timing.time_hosted_calls(model, self.shared, n, start_call, end_call)
        finally:
            if collecting:
                gc.enable()
        self.kept = kept
        return {
            "calls": len(times),
            "ops": {str(i): dict(r.counts) for i, r in ops.items()},
            "elements": {str(i): dict(r.elements) for i, r in ops.items()},
        }

    def time_block(self, model, msg: dict, channel: Channel, hold_outputs: bool = False) -> dict:
        """One timed block (timing.time_calls) of ``msg["calls"]`` calls, each started by the host's
        word on ``channel``: a checksum of every output goes back at once; the operators of the calls
        the host marked for the census come with the reply, with their volumes; the last ``keep_last`` outputs are kept
        for the host to fetch: with ``hold_outputs`` as returned (the candidate's: a kernel that writes every
        result into one buffer shows it), else copied at once (the reference's: a compiled reference run
        through CUDA graphs returns the same static buffer every call, and is trusted). With ``hosted``
        (the CPU), the host stages and reads instead (``_time_hosted_block``)."""
        if msg.get("hosted"):
            return self._time_hosted_block(model, msg, channel, hold_outputs)
        checksummer = timing.Checksummer(msg["checksum_seed"], self.device)
        n = int(msg["calls"])
        keep_from = n - msg.get("keep_last", 0)
        kept: list = []
        ops: dict[int, op_census.OpRecorder] = {}

        def start_call(i: int):
            channel.send({"ready": i})
            go = channel.receive()
            if go.get("go") != i:
                raise RuntimeError(f"the host's word for call {i} was {go!r}")
            if not go.get("census"):
                return go["call"], _NO_CENSUS
            recorder = op_census.OpRecorder()
            ops[i] = recorder
            return go["call"], recorder

        def end_call(i: int, ms: float, out, span: list[int]) -> None:
            channel.send({"done": i, "ms": ms, "checksum": checksummer(out), "span": span})
            if i >= keep_from:
                if type(out) is not torch.Tensor:
                    kept.append(None)
                else:
                    kept.append(out if hold_outputs else cpu(out).clone())

        times = timing.time_calls(model, self.pool, n, self.device, start_call, end_call)
        self.kept = kept
        return {
            "calls": len(times),
            "ops": {str(i): dict(r.counts) for i, r in ops.items()},
            "elements": {str(i): dict(r.elements) for i, r in ops.items()},
        }


class Channel:
    """The runner's side of its two pipes, for the steps inside a command (a timed block's calls)."""

    def __init__(self, reader: protocol.LineReader, reply_fd: int) -> None:
        self.reader = reader
        self.reply_fd = reply_fd

    def send(self, message: dict) -> None:
        protocol.write_message(self.reply_fd, message)

    def receive(self) -> dict:
        return self.reader.read(None)

    # A timed call's word and answer (hosted_calls), inside the host's window: raw lines, the fewest steps.

    def receive_word(self) -> bytes:
        """The host's next line as it came, nothing parsed: a blocking read (the host writes a timed
        call's word before it resumes this process, so it is there when this process runs)."""
        return self.reader.next_line()

    def answer(self, line: bytes) -> None:
        protocol.write_all(self.reply_fd, memoryview(line), None)


def profile_kernels(model, inputs: list, device: torch.device) -> list:
    """[name, microseconds] of the device kernels one forward pass launches, summed by name
    (torch.profiler, CUDA): one entry per name, so that thousands of launches make a short reply."""
    from torch.profiler import ProfilerActivity, profile

    with torch.no_grad():
        model(*inputs)
        sync(device)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            model(*inputs)
            sync(device)
    by_name = collections.Counter()
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            by_name[event.name] += event.time_range.elapsed_us()
    return [[name, us] for name, us in by_name.items()]


class _NoCensus:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NO_CENSUS = _NoCensus()


# -- the process --------------------------------------------------------------------------


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:500]


def _is_compile_error(exc: BaseException) -> bool:
    if isinstance(exc, SyntaxError):
        return True
    name = type(exc).__name__
    text = str(exc)
    return (
        name in {"CompilationError", "CalledProcessError", "CompileError", "CUDACompileError"}
        or "Error building extension" in text
        or "error: " in text
        and ("nvcc" in text or "ninja" in text)
        or "NVRTC_ERROR" in text
        or "CUDA_HOME" in text
    )


def serve(runner, cmd_fd: int, reply_fd: int) -> None:
    """Answer the host's commands with ``runner.cmd_<op>`` until it says exit or goes away."""
    reader = protocol.LineReader(cmd_fd)
    runner.channel = Channel(reader, reply_fd)
    own_threads = threading.active_count()
    while True:
        try:
            msg = reader.read(None)
        except protocol.ChannelClosed:
            return
        op = msg.get("op")
        if op == "exit":
            return
        handler = getattr(runner, f"cmd_{op}", None)
        try:
            if handler is None:
                raise ValueError(f"unknown command {op!r}")
            reply = {"ok": True, **handler(msg)}
        except taskfile.TaskError as exc:
            reply = {"ok": False, "kind": "task", "error": str(exc)}
        except BaseException as exc:  # the candidate's failure is data, not our crash
            kind = "compile" if _is_compile_error(exc) else "runtime"
            if isinstance(exc, torch.cuda.OutOfMemoryError):
                kind = "oom"
            reply = {
                "ok": False,
                "kind": kind,
                "error": _one_line(exc),
                "detail": str(exc)[-8000:],
                "traceback": "".join(traceback.format_exception(exc))[-4000:],
                # A thread the candidate left running can be what raised (two launches at once).
                "threads_running": threading.active_count() - own_threads,
            }
        payload, runner.payload = runner.payload, b""
        protocol.write_message(reply_fd, reply, payload if reply["ok"] else b"")


# glibc's mallopt parameters
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4


def keep_freed_memory() -> None:
    """Have this process's malloc keep the memory it frees for reuse, as PyTorch's caching allocator
    does on a GPU. By default glibc maps every block above its mmap threshold (128 KiB, rising to
    32 MiB at most) afresh and returns it when freed, so each call's new output of that size costs
    page faults on every page: a kernel that kept buffers of its own, or set mallopt in its own
    process, did not pay what the reference paid (red team round 16: a 40 MiB ReLU at 3.7x and 4.4x
    where the honest kernel makes 1.0x). Both runners do it before any task or candidate code runs;
    elsewhere than glibc, nothing changes."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_MAX, 0)  # every block from the heap, none mapped on its own
    mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)  # and the heap's free top kept, not returned


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--role", choices=["reference", "candidate"], required=True)
    parser.add_argument("--cmd-fd", type=int, required=True)
    parser.add_argument("--reply-fd", type=int, required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch's CPU threads (0: torch's default)")
    parser.add_argument("--layout", default="{}", help="JSON: the folders bound back inside (isolation.layout)")
    parser.add_argument("--shared-fd", type=int, default=-1, help="the memory the host stages timed inputs in")
    args = parser.parse_args(argv)
    # Its program came on standard input (host.runner_program): what a candidate finds there is
    # /dev/null, as anywhere a program's input is not used, not a pipe at its end.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    keep_freed_memory()
    op_census.prepare()
    if args.role == "candidate":
        from forge_sandbox import isolation
        from forge_sandbox.candidate_runner import CandidateRunner

        resource.setrlimit(resource.RLIMIT_FSIZE, (CANDIDATE_FILE_LIMIT, CANDIDATE_FILE_LIMIT))
        # No core dumps: where the kernel pipes them to a helper, that helper runs outside its groups.
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        files = "not restricted: not isolated"
        if os.getpid() == 1:  # in namespaces of its own (isolation.py), before any candidate code
            files = isolation.settle(json.loads(args.layout), args.cmd_fd, args.reply_fd)
        runner = CandidateRunner(args.workdir, args.device, files)
    else:
        from forge_sandbox.reference_runner import ReferenceRunner

        runner = ReferenceRunner(args.workdir, args.device)
    runner.harness.shared_fd = args.shared_fd
    serve(runner, args.cmd_fd, args.reply_fd)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a candidate's atexit hooks or threads must not
    # run after the last reply, and CUDA teardown can hang on a broken context.
    os._exit(0)


if __name__ == "__main__":
    main()
