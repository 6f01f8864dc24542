"""A stand-in for the ``ncu`` command line, for tests on machines without a GPU.

It is a real executable (the tests write a wrapper script that runs this file),
so forge starts it, waits for it and kills it exactly as it would the real one.
Profiling runs the target application for real (the candidate runs on the CPU)
and writes a report that names a fixture folder; importing that report prints
the fixture's CSV pages. ``FAKE_NCU_MODE`` picks a behaviour of the real ncu:
ok, perm (ERR_NVGPUCTRPERM), nokernels, hang, badmetric (an unknown --metrics
name); an application that fails fails the profile as it would. Each call's argv is appended to
``FAKE_NCU_LOG`` as a JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

FLAGS_WITH_VALUE = {
    "--profile-from-start", "--clock-control", "--launch-count", "--kernel-name-base", "-k", "--section",
    "--metrics", "-o", "-i", "--page", "--print-units", "--print-kernel-base", "--launch-skip", "--log-file", "--target-processes",
}  # fmt: skip


def main(argv: list[str]) -> int:
    with open(os.environ["FAKE_NCU_LOG"], "a") as log:
        log.write(json.dumps(argv) + "\n")
    if argv == ["--version"]:
        print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2099.1.0.0 (fake for tests)")
        return 0
    options, app, i = {}, [], 0
    while i < len(argv):
        if argv[i] in FLAGS_WITH_VALUE:
            options.setdefault(argv[i], []).append(argv[i + 1])
            i += 2
        elif argv[i] == "-f":
            i += 1
        else:
            app = argv[i:]
            break
    if "-i" in options:
        with open(options["-i"][0]) as f:
            fixture = f.read().strip()
        with open(os.path.join(fixture, f"{options['--page'][0]}.csv")) as f:
            sys.stdout.write(f.read())
        return 0
    mode = os.environ.get("FAKE_NCU_MODE", "ok")
    messages = open(options["--log-file"][0], "a") if "--log-file" in options else sys.stdout

    def say(line: str) -> None:  # ncu's own messages: to --log-file when given, as the real one does
        messages.write(line + "\n")
        messages.flush()

    if mode == "hang":
        with open(os.environ["FAKE_NCU_LOG"] + ".pid", "w") as f:
            f.write(str(os.getpid()))
        time.sleep(3600)
    if mode == "badmetric" and "--metrics" in options:
        say("==ERROR== Failed to find metric dram__bytes_read.sum")
        return 1
    say("==PROF== Connected to process (fake)")
    if mode == "perm":
        say("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
        return 1
    code = subprocess.run(app).returncode
    if code != 0:
        say(f"==ERROR== The application returned an error code ({code}).")
        return code
    if mode == "nokernels":
        say("==WARNING== No kernels were profiled.")
        return 0
    with open(options["-o"][0] + ".ncu-rep", "w") as f:
        f.write(os.environ["FAKE_NCU_FIXTURE"])
    say(f"==PROF== Report: {options['-o'][0]}.ncu-rep")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
