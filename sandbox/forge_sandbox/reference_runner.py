"""The reference runner: trusted code only (the task), in a process of its own.

It describes and lints tasks, builds the reference ``Model`` under the host's
seed, makes every input from the host's seeds (saved as files for the
candidate's runner), computes the expected outputs (sent on the pipe only: they
never touch the file system, where a candidate could look for them), records
the operators the reference dispatches, compiles the reference with
torch.compile for the second baseline, and times both with the same function
the candidate is timed with.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import torch

from forge_sandbox import compare, device_facts, protocol, taskfile, variants, weights
from forge_sandbox.runner import ModelHarness, cpu, profile_kernels, sync, to_device


class ReferenceRunner:
    def __init__(self, workdir: str, device: str) -> None:
        self.workdir = workdir
        self.device = torch.device(device)
        self.harness = ModelHarness(self.device)
        self.task = None
        self.task_path = ""
        self.compiled = None  # torch.compile of the reference, once asked for
        self.init_inputs: list = []  # the configuration's constructor arguments
        self.plan: list[str] = []  # the configuration's verification trials: each one's variant
        self.trial_seeds: list[int] = []  # and the seed its inputs are made from
        self.standard_nonfinite = 0  # the most non-finite outputs a trial of the task's own inputs gave
        self.payload = b""  # raw bytes to send after the next reply
        self.channel = None  # runner.Channel, set by serve: the steps inside a timed block
        self.probe_us: float | None = None  # a tiny GPU round trip on an idle GPU (cmd_quiet)
        self.probe_tensor: torch.Tensor | None = None

    def path(self, name: str) -> str:
        return f"{self.workdir}/{name}"

    # -- the device and the task --------------------------------------------------------------

    def cmd_hello(self, msg: dict) -> dict:
        env = {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "device": str(self.device),
            "cpu_threads": torch.get_num_threads(),
        }
        env.update(device_facts.cuda_facts(self.device) if self.device.type == "cuda" else device_facts.cpu_facts())
        try:
            import triton

            env["triton"] = triton.__version__
        except Exception:
            env["triton"] = None
        env["triton_interpret"] = os.environ.get("TRITON_INTERPRET") == "1"
        if self.device.type == "cuda" and msg.get("calibrate"):
            self.probe_us = min(self._gpu_round_trip_us() for _ in range(20))
        return {"environment": env}

    def cmd_describe(self, msg: dict) -> dict:
        """How many input configurations the task has at this size, and its declarations."""
        module = taskfile.load_task(msg["task"], source=msg.get("task_source"))
        configs = taskfile.configurations(module, msg["size"])
        tolerance = getattr(module, "TOLERANCE", None)
        if tolerance is not None and not isinstance(tolerance, dict):
            raise taskfile.TaskError(f"{msg['task']}: TOLERANCE must be a dict with atol, rtol, rel_norm")
        # The last configuration, when SMALL replaced a dtype: the task's own, which this device may not run.
        own_dtype = len(configs) - 1 if msg["size"] == "small" and taskfile.own_dtypes(module, configs[0]) else None
        return {"configs": len(configs), "tolerance": tolerance, "own_dtype_config": own_dtype}

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
            outs = [model(*to_device(self._inputs_from_seed(seed), self.device)) for seed in (1, 2)]
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

    # -- one configuration ----------------------------------------------------------------------

    def cmd_setup(self, msg: dict) -> dict:
        """Build the reference model for one configuration; make and save its timing inputs. The
        verification trials (``variants``, ``trial_seeds``) are made a group at a time (cmd_forward)."""
        path = msg["task"]
        probe = taskfile.load_task(path, source=msg.get("task_source"))
        overrides = taskfile.configurations(probe, msg["size"])[msg["config"]]
        self.task, self.task_path = taskfile.load_task(path, overrides, msg.get("task_source")), path
        init_inputs = taskfile.call_task_function(self.task, "get_init_inputs", path)
        self.init_inputs = init_inputs
        torch.manual_seed(msg["init_seed"])
        self.harness.model = self.task.Model(*to_device(init_inputs, self.device)).to(self.device)
        self.compiled = None
        self.plan, self.trial_seeds = list(msg["variants"]), list(msg["trial_seeds"])
        self.standard_nonfinite = 0
        pool = [[cpu(x) for x in self._inputs_from_seed(seed)] for seed in msg["pool_seeds"]]
        self.harness.load_pool(pool)
        protocol.save_tensors(self.path("init_inputs.pt"), init_inputs)
        protocol.save_tensors(self.path("pool_inputs.pt"), pool)
        return {
            "init_inputs": self.path("init_inputs.pt"),
            "pool_inputs": self.path("pool_inputs.pt"),
            "flops": taskfile.declared_number(self.task, "get_flops"),
            "bytes": taskfile.declared_number(self.task, "get_bytes"),
            "input_bytes": _nbytes(pool[0]),
            "overrides": {k: repr(v) for k, v in overrides.items()},
        }

    def _inputs_from_seed(self, seed: int) -> list:
        torch.manual_seed(seed)
        return taskfile.call_task_function(self.task, "get_inputs", self.task_path)

    def cmd_forward(self, msg: dict) -> dict:
        """The next group of verification trials from ``start``: their inputs made and saved for the
        candidate's runner, and the expected outputs (on the pipe) of every one the reference accepts,
        with their spread under rounding (variants.rounding_spread), and its operators.

        A group ends once its inputs and outputs hold ``group_bytes`` (at least two trials, so that a
        kernel that writes every result into one buffer shows it): at full size, every trial at once
        would not fit in memory. A trial of the task's own inputs that raises is the task's fault; a
        variant that the reference does not accept (variants.acceptable) is dropped, with the reason."""
        h = self.harness
        start, budget = int(msg["start"]), int(msg["group_bytes"])
        group, kept, dropped, outputs, spreads, ops, elements = [], [], {}, [], [], {}, {}
        held = 0
        for i in range(start, len(self.plan)):
            if len(group) >= 2 and held >= budget:
                break
            variant = self.plan[i]
            seed = self.trial_seeds[i]
            inputs = [cpu(x) for x in variants.transform_values(self._inputs_from_seed(seed), variant, seed)]
            group.append(inputs)
            held += _nbytes(inputs)
            if not variants.applies(inputs, variant):  # before its layout is made
                dropped[str(i)] = variants.not_applying(variant)
                continue
            unmatchable = variants.evaluation_mode_unmatchable(variant, h.model)
            if unmatchable:
                dropped[str(i)] = unmatchable
                continue
            h.load_trials([inputs], [variant])
            standard = variants.inputs_of(variant) == variants.STANDARD  # the task's own inputs
            with variants.model_state(variant, h.model):
                try:
                    out, record = h.forward(h.model, h.trials[0], census=True)
                except Exception as exc:
                    if standard:
                        raise
                    dropped[str(i)] = f"the reference raised {type(exc).__name__}"
                    continue
                if standard:
                    self.standard_nonfinite = max(self.standard_nonfinite, variants.nonfinite(out))
                if not variants.acceptable(out, variant, self.standard_nonfinite):
                    dropped[str(i)] = "the reference's output is not finite"
                    continue
                spread, share = self._rounding_spread(h.trials[0], out, variant=variant)
            if share is not None and not standard:
                dropped[str(i)] = f"the reference's output moves {share:.1%} when its inputs are rounded differently"
                continue
            kept.append(i)
            outputs.append(cpu(out).clone() if isinstance(out, torch.Tensor) else out)
            spreads.append(None if spread is None else cpu(spread))
            held += _nbytes([outputs[-1], spreads[-1]])
            ops[str(i)], elements[str(i)] = dict(record.counts), dict(record.elements)
        protocol.save_tensors(self.path("verify_inputs.pt"), group)
        self.payload = protocol.tensors_to_bytes([outputs, spreads])
        return {"kept": kept, "dropped": dropped, "ops": ops, "elements": elements, "next": start + len(group),
                "verify_inputs": self.path("verify_inputs.pt")}  # fmt: skip

    def cmd_reload(self, msg: dict) -> dict:
        """Move the reference's parameters as a loaded checkpoint would (weights.py) and run one trial
        again: the moves, the expected output and its rounding spread (on the pipe), and the operators;
        with ``checkpoint``, the moved state saved as a checkpoint of the reference is.

        Where the moved weights make the reference raise or its output less finite than before, they
        are put back and the step is skipped, with the reason."""
        h = self.harness
        inputs = h.first_trial
        if not any(weights.movable(p) for p in h.model.parameters()):
            return {"moves": [], "skipped": "the reference has no trainable floating-point parameters"}
        # changed in place as a training step may: some elements of each parameter only (weights.moved)
        partial = not msg.get("checkpoint")
        moves, out, record, spread, problem = self._run_moved(h.model, inputs, int(msg["seed"]), partial)
        if problem:
            return {"moves": [], "skipped": problem, "moved_badly": True}
        self.payload = protocol.tensors_to_bytes([cpu(out).clone(), None if spread is None else cpu(spread)])
        reply = {"moves": moves, "ops": dict(record.counts), "elements": dict(record.elements)}
        if msg.get("checkpoint"):  # the reference's own state, as a checkpoint of it is, for ModelNew to load
            protocol.save_tensors(self.path("checkpoint.pt"), {k: cpu(v) for k, v in h.model.state_dict().items()})
            reply["checkpoint"] = self.path("checkpoint.pt")
        return reply

    def cmd_another(self, msg: dict) -> dict:
        """A second Model of the configuration built beside the first, under ``init_seed``, its trainable
        parameters moved by ``seed`` as a checkpoint of its own would move them (weights.py), and the
        configuration's first trial run on it and then on the first model again: the moves, the moved
        state as a checkpoint, both outputs with their rounding spreads (on the pipe) and the operators
        of each call. A network holds many modules of one kind, each with weights of its own.

        Where the moved weights make the reference raise or its output less finite, the second model
        keeps the weights it was built with (``moves`` empty, ``skipped`` says why)."""
        h = self.harness
        inputs = h.first_trial
        torch.manual_seed(msg["init_seed"])
        second = self.task.Model(*to_device(self.init_inputs, self.device)).to(self.device)
        moves, out, record, spread, skipped = self._run_moved(second, inputs, int(msg["seed"]))
        if skipped:  # with the weights it was built with
            out, record = h.forward(second, inputs, census=True)
            spread, _ = self._rounding_spread(inputs, out, second)
        first_out, first_record = h.forward(h.model, inputs, census=True)  # as the candidate's runner calls them
        runs = ((out, record, spread), (first_out, first_record, self._rounding_spread(inputs, first_out)[0]))
        outputs, spreads, ops, elements = [], [], {}, {}
        for k, (out, record, spread) in enumerate(runs):
            outputs.append(cpu(out).clone())
            spreads.append(None if spread is None else cpu(spread))
            ops[str(k)], elements[str(k)] = dict(record.counts), dict(record.elements)
        self.payload = protocol.tensors_to_bytes([outputs, spreads])
        reply = {"moves": moves, "skipped": skipped, "ops": ops, "elements": elements}
        if moves:
            protocol.save_tensors(self.path("checkpoint.pt"), {k: cpu(v) for k, v in second.state_dict().items()})
            reply["checkpoint"] = self.path("checkpoint.pt")
        return reply

    def _run_moved(self, model, inputs: list, seed: int, partial: bool = False) -> tuple:
        """``model``'s trainable parameters moved by ``seed`` (weights.move_parameters) and ``inputs`` run on it
        under the census: (moves, output, operators, rounding spread, ''); where the reference raises or its
        output is less finite than before with them, they are put back: ([], None, None, None, why)."""
        h = self.harness
        before, _ = h.forward(model, inputs, census=False)
        kept = [p.detach().to("cpu", copy=True) for p in model.parameters()]  # not a second copy on the GPU
        moves = weights.move_parameters(model, seed, partial)
        try:
            out, record = h.forward(model, inputs, census=True)
            worse = variants.nonfinite(out) > variants.nonfinite(before)
            problem = "the reference's output is not finite with them" if worse else ""
            spread, _ = self._rounding_spread(inputs, out, model)
        except Exception as exc:
            problem = f"the reference raised {type(exc).__name__} with them"
        if problem:
            with torch.no_grad():
                for p, value in zip(model.parameters(), kept):
                    p.copy_(value)
            return [], None, None, None, problem
        return moves, out, record, spread, ""

    def _rounding_spread(self, inputs: list, out, model=None, variant: str = variants.STANDARD) -> tuple:
        """The output's spread under rounding (variants.rounding_spread, as for ``variant``'s trial) of
        ``model`` (the harness's by default), and its share of the output where that is unstable: then the
        spread is None, and no tolerance widens by it."""
        h = self.harness
        model = h.model if model is None else model
        spread = variants.rounding_spread(lambda x: h.forward(model, x, census=False)[0], inputs, out, variant)
        share = None if spread is None else variants.unstable(spread, out, variant)
        return (spread if share is None else None), share

    # -- baselines and timing ---------------------------------------------------------------------

    def cmd_compile(self, msg: dict) -> dict:
        """torch.compile the reference and warm it up (the compile itself) on timing inputs, untimed."""
        mode = msg.get("mode") or "default"
        start = time.perf_counter()
        try:
            compiled = torch.compile(self.harness.model, mode=None if mode == "default" else mode)
            with torch.no_grad():
                for inputs in self.harness.pool[:2]:
                    compiled(*inputs)
            sync(self.device)
        except Exception as exc:
            return {"compiled": False, "reason": f"torch.compile failed: {type(exc).__name__}: {_first_line(exc)}"}
        self.compiled = compiled
        return {"compiled": True, "seconds": round(time.perf_counter() - start, 3)}

    def cmd_time(self, msg: dict) -> dict:
        """One timed block of the eager reference or (``which: compiled``) the compiled one."""
        model = self.compiled if msg.get("which") == "compiled" else self.harness.model
        if model is None:
            raise RuntimeError("the compiled reference was not built")
        return self.harness.time_block(model, msg, self.channel)

    def cmd_share(self, msg: dict) -> dict:
        """Map the memory the host stages the timed inputs in (hosted_calls)."""
        self.harness.share_inputs(msg["layout"])
        return {}

    def cmd_kept(self, msg: dict) -> dict:
        self.payload = self.harness.kept_payload()
        return {}

    def cmd_quiet(self, msg: dict) -> dict:
        """Wait until no other process's work is on the GPU (CUDA), so the reference is timed alone.

        A tiny GPU round trip takes microseconds on an idle GPU; while another process's kernel
        runs, ours waits for a time slice. Returns whether the GPU became quiet in time."""
        if self.device.type != "cuda" or self.probe_us is None:
            return {"quiet": True, "waited_ms": 0.0}
        limit_us = max(3 * self.probe_us, self.probe_us + 50)
        start = time.perf_counter()
        deadline = start + float(msg.get("timeout", 2.0))
        while True:
            latency = statistics.median(self._gpu_round_trip_us() for _ in range(5))
            waited = (time.perf_counter() - start) * 1e3
            if latency <= limit_us:
                return {"quiet": True, "waited_ms": round(waited, 3)}
            if time.perf_counter() > deadline:
                return {"quiet": False, "waited_ms": round(waited, 3), "round_trip_us": round(latency, 1)}
            time.sleep(0.001)

    def _gpu_round_trip_us(self) -> float:
        if self.probe_tensor is None:
            self.probe_tensor = torch.zeros(1, device=self.device)
        start = time.perf_counter()
        self.probe_tensor.add_(1)
        torch.cuda.synchronize()
        return (time.perf_counter() - start) * 1e6

    def cmd_kernels(self, msg: dict) -> dict:
        """The GPU kernels one forward pass of the reference launches (CUDA profiler)."""
        return {"kernels": profile_kernels(self.harness.model, self.harness.first_trial, self.device)}


def _nbytes(values: list) -> int:
    return sum(x.numel() * x.element_size() for x in values if isinstance(x, torch.Tensor))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]


def _describe_value(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"{str(x.dtype).replace('torch.', '')}[{', '.join(map(str, x.shape))}]"
    return repr(x)[:40]
