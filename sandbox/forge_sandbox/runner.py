"""A runner process: loads a task or a candidate and runs it on the host's command.

Started by the host as ``python -m forge_sandbox.runner --cmd-fd R --reply-fd W
--workdir D --device DEV`` in a new session (so a timeout kills its whole
process group, compilers included). It reads one JSON command at a time and
answers with one JSON reply; tensors go to files in the workdir.

A reference runner is trusted (task code only): it makes the inputs from the
host's seeds and computes the expected outputs. A candidate runner imports
untrusted code, so nothing it says is believed without a check on the host;
the checks made here (inputs unchanged, thread count, launch census, timing
primitives untouched) are extra evidence, not the verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import traceback

import torch

from forge_sandbox import census, compare, device_facts, isolation, protocol, static_check, taskfile, timing


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


def to_device(values: list, device: torch.device) -> list:
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def import_candidate(path: str):
    """Import the candidate (this is where load_inline compiles) with the census hooks in place.

    The profiled run (profile_target.py) imports it the same way, so that the same compile flags
    hit the same build cache. Returns the module and the launch counter."""
    with open(path) as f:
        source = f.read()
    counter = census.install(static_check.check_source(source).backends)
    module = taskfile.load_module(path, "candidate")
    if not callable(getattr(module, "ModelNew", None)):
        raise LookupError("the candidate defines no ModelNew class")
    return module, counter


def build_model(module, init_inputs: list, init_seed: int, device: torch.device):
    """``ModelNew`` from the reference's constructor arguments, its parameters drawn from ``init_seed``."""
    torch.manual_seed(init_seed)
    model = module.ModelNew(*to_device(init_inputs, device))
    return model.to(device) if isinstance(model, torch.nn.Module) else model


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _bytes_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality (NaN-safe), for the inputs-unchanged check."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


class Runner:
    def __init__(self, workdir: str, device: str) -> None:
        self.workdir = workdir
        self.device = torch.device(device)
        self.model = None
        self.task = None
        self.task_path = ""
        self.candidate_module = None
        self.counter: census.LaunchCounter | None = None
        self.inputs: list[list] = []
        self.pool: list[list] = []
        self.role = ""
        self.payload = b""  # raw bytes to send after the next reply
        self.files = "not restricted: not isolated"  # what isolation.restrict_files achieved

    def path(self, name: str) -> str:
        return os.path.join(self.workdir, name)

    # -- commands ---------------------------------------------------------------

    def cmd_hello(self, msg: dict) -> dict:
        if msg.get("probe"):  # the candidate's runner, before any candidate code: its isolation, and CUDA
            return {"files": self.files, "cuda": self._cuda_works() if self.device.type == "cuda" else None}
        env = {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "device": str(self.device),
        }
        env.update(device_facts.cuda_facts(self.device) if self.device.type == "cuda" else device_facts.cpu_facts())
        try:
            import triton

            env["triton"] = triton.__version__
        except Exception:
            env["triton"] = None
        env["triton_interpret"] = os.environ.get("TRITON_INTERPRET") == "1"
        return {"environment": env}

    @staticmethod
    def _cuda_works() -> bool:
        try:
            torch.zeros(1, device="cuda").add_(1)
            torch.cuda.synchronize()
            return True
        except Exception:
            return False

    def cmd_describe(self, msg: dict) -> dict:
        """How many input configurations the task has at this size, and its declarations."""
        module = taskfile.load_task(msg["task"], source=msg.get("task_source"))
        configs = taskfile.configurations(module, msg["size"])
        tolerance = getattr(module, "TOLERANCE", None)
        if tolerance is not None and not isinstance(tolerance, dict):
            raise taskfile.TaskError(f"{msg['task']}: TOLERANCE must be a dict with atol, rtol, rel_norm")
        return {"configs": len(configs), "tolerance": tolerance}

    def cmd_inspect(self, msg: dict) -> dict:
        """What a task is, for `forge tasks`; with ``lint``, whether its output is degenerate."""
        path = msg["task"]
        module = taskfile.load_task(path)
        configs = taskfile.configurations(module, msg["size"])
        task = taskfile.load_task(path, configs[0])
        inputs = taskfile.call_task_function(task, "get_inputs", path)
        info = {
            "doc": ((module.__doc__ or "").strip().splitlines() or [""])[0],
            "inputs": [_describe_value(x) for x in inputs],
            "configs": len(configs),
            "flops": taskfile.declared_number(task, "get_flops"),
            "bytes": taskfile.declared_number(task, "get_bytes"),
            "warnings": [],
        }
        if msg.get("lint"):
            info["warnings"] = self._lint(task, path)
        return info

    def _lint(self, task, path: str) -> list[str]:
        init_inputs = taskfile.call_task_function(task, "get_init_inputs", path)
        torch.manual_seed(0)
        self.task, self.task_path = task, path
        model = task.Model(*to_device(init_inputs, self.device)).to(self.device)
        with torch.no_grad():
            outs = [model(*self._inputs_from_seed(seed)) for seed in (1, 2)]
        if not all(type(o) is torch.Tensor for o in outs):
            return ["Model.forward does not return a single torch.Tensor"]
        warnings = []
        a, b = (o.detach().double().cpu() for o in outs)
        if a.shape == b.shape and torch.equal(a, b):
            warnings.append("the output does not depend on the inputs (two seeds gave identical outputs)")
        finite = a[torch.isfinite(a)]
        if finite.numel() and float(finite.std() if finite.numel() > 1 else 0) <= 1e-6 * (
            float(finite.abs().mean()) + 1e-12
        ):
            warnings.append("the output is nearly constant")
        tol = compare.Tolerance.for_output(outs[0].dtype, getattr(task, "TOLERANCE", None))
        if finite.numel():
            rms = float((finite * finite).mean().sqrt())
            near_zero = float((finite.abs() <= tol.atol * max(1.0, rms) + tol.rtol * finite.abs()).double().mean())
            if near_zero > 0.99:
                warnings.append(
                    f"{near_zero:.0%} of the output is within tolerance of zero: all-zeros would pass elementwise"
                )
        return warnings

    def cmd_setup_reference(self, msg: dict) -> dict:
        """Build the reference model for one configuration; make and save all inputs."""
        self.role = "reference"
        path = msg["task"]
        probe = taskfile.load_task(path, source=msg.get("task_source"))
        overrides = taskfile.configurations(probe, msg["size"])[msg["config"]]
        self.task, self.task_path = taskfile.load_task(path, overrides, msg.get("task_source")), path
        init_inputs = taskfile.call_task_function(self.task, "get_init_inputs", path)
        torch.manual_seed(msg["init_seed"])
        self.model = self.task.Model(*to_device(init_inputs, self.device)).to(self.device)
        self.inputs = [self._inputs_from_seed(seed) for seed in msg["verify_seeds"]]
        self.pool = [self._inputs_from_seed(seed) for seed in msg["pool_seeds"]]
        protocol.save_tensors(self.path("init_inputs.pt"), init_inputs)
        protocol.save_tensors(self.path("verify_inputs.pt"), [[_cpu(x) for x in s] for s in self.inputs])
        protocol.save_tensors(self.path("pool_inputs.pt"), [[_cpu(x) for x in s] for s in self.pool])
        first = self.inputs[0]
        return {
            "init_inputs": self.path("init_inputs.pt"),
            "verify_inputs": self.path("verify_inputs.pt"),
            "pool_inputs": self.path("pool_inputs.pt"),
            "flops": taskfile.declared_number(self.task, "get_flops"),
            "bytes": taskfile.declared_number(self.task, "get_bytes"),
            "input_bytes": sum(x.numel() * x.element_size() for x in first if isinstance(x, torch.Tensor)),
            "overrides": {k: repr(v) for k, v in overrides.items()},
        }

    def _inputs_from_seed(self, seed: int) -> list:
        torch.manual_seed(seed)
        return to_device(taskfile.call_task_function(self.task, "get_inputs", self.task_path), self.device)

    def cmd_load_candidate(self, msg: dict) -> dict:
        """Import the candidate (this is where load_inline compiles) with the census hooks in place."""
        self.role = "candidate"
        self.candidate_module, self.counter = import_candidate(msg["candidate"])
        return {"patched": self._patched_primitives()}

    def cmd_setup_candidate(self, msg: dict) -> dict:
        init_inputs = protocol.load_tensors(msg["init_inputs"])
        self.inputs = [to_device(s, self.device) for s in protocol.load_tensors(msg["verify_inputs"])]
        self.pool = [to_device(s, self.device) for s in protocol.load_tensors(msg["pool_inputs"])]
        self.model = build_model(self.candidate_module, init_inputs, msg["init_seed"], self.device)
        return {}

    def cmd_forward(self, msg: dict) -> dict:
        """Run every verification input set once; save the outputs; report what was seen."""
        outputs, trials = [], []
        with torch.no_grad():
            for inputs in self.inputs:
                before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
                threads = threading.active_count()
                launches = self.counter.count if self.counter else 0
                out = self.model(*inputs)
                _sync(self.device)
                trial = {
                    "threads_started": threading.active_count() - threads,
                    "launches": (self.counter.count - launches) if self.counter else None,
                    "output_type": f"{type(out).__module__}.{type(out).__qualname__}",
                    "exact_tensor": type(out) is torch.Tensor,
                    "inputs_changed": [
                        i
                        for i, (a, b) in enumerate(zip(before, inputs))
                        if isinstance(a, torch.Tensor) and not _bytes_equal(a, b)
                    ],
                }
                if type(out) is torch.Tensor:
                    trial["storage_ok"] = out.untyped_storage().nbytes() >= out.numel() * out.element_size()
                    outputs.append(out.detach().cpu().clone())
                else:
                    outputs.append(None)
                trials.append(trial)
        return {"outputs": self._export(outputs, "outputs.pt"), "trials": trials, "patched": self._patched_primitives()}

    def cmd_census(self, msg: dict) -> dict:
        """The device kernels one forward pass launches, with their times, from torch.profiler (CUDA)."""
        from torch.profiler import ProfilerActivity, profile

        inputs = self.inputs[0]
        with torch.no_grad():
            self.model(*inputs)
            _sync(self.device)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                self.model(*inputs)
                _sync(self.device)
        kernels = [
            [event.name, event.time_range.elapsed_us()]
            for event in prof.events()
            if event.device_type == torch.autograd.DeviceType.CUDA
        ]
        return {"kernels": kernels}

    def cmd_time(self, msg: dict) -> dict:
        """One timed block; see timing.time_calls for the method."""
        checksummer = timing.Checksummer(msg["checksum_seed"], self.device)
        sums: list = []
        keep_from = len(msg["calls"]) - msg.get("keep_last", 0)
        kept: list = []

        def on_output(i: int, out) -> None:
            sums.append(checksummer(out))
            if i >= keep_from:
                kept.append(out.detach().cpu().clone() if type(out) is torch.Tensor else None)

        threads = threading.active_count()
        times = timing.time_calls(self.model, self.pool, msg["calls"], self.device, msg.get("warmup", 0), on_output)
        name = f"timed_outputs_{msg.get('block', 0)}.pt"
        return {
            "times_ms": times,
            "checksums": sums,
            "kept_outputs": self._export(kept, name),
            "threads_started": threading.active_count() - threads,
            "patched": self._patched_primitives(),
        }

    def _export(self, tensors, name: str):
        """Hand outputs to the host: the reference's on the pipe (they are the answers), others as a file."""
        if self.role == "reference":
            self.payload = protocol.tensors_to_bytes(tensors)
            return "payload"
        protocol.save_tensors(self.path(name), tensors)
        return self.path(name)

    def _patched_primitives(self) -> list[str]:
        bound, live = timing.bound_primitives(), timing.live_primitives()
        return [name for name in bound if live[name] is not bound[name]]


def _describe_value(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"{str(x.dtype).replace('torch.', '')}[{', '.join(map(str, x.shape))}]"
    return repr(x)[:40]


def _cpu(x):
    return x.detach().cpu() if isinstance(x, torch.Tensor) else x


def serve(runner: Runner, cmd_fd: int, reply_fd: int) -> None:
    reader = protocol.LineReader(cmd_fd)
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
            }
        payload, runner.payload = runner.payload, b""
        protocol.write_message(reply_fd, reply, payload if reply["ok"] else b"")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cmd-fd", type=int, required=True)
    parser.add_argument("--reply-fd", type=int, required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--layout", default="{}", help="JSON: the folders bound back inside (isolation.layout)")
    args = parser.parse_args(argv)
    files = "not restricted: not isolated"
    if os.getpid() == 1:  # in namespaces of its own (isolation.py), before any candidate code
        files = isolation.settle(json.loads(args.layout), args.cmd_fd, args.reply_fd)
    runner = Runner(args.workdir, args.device)
    runner.files = files
    serve(runner, args.cmd_fd, args.reply_fd)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a candidate's atexit hooks or threads must not
    # run after the last reply, and CUDA teardown can hang on a broken context.
    os._exit(0)


if __name__ == "__main__":
    main()
