"""Where CUDA stops working inside the candidate's isolation (isolation.py), one piece at a time.

Each probe is a fresh process that initializes CUDA (one small kernel and a
synchronize) after some of the isolation has been applied: the namespaces one
by one, then the file-system restriction, the mount lock and the system call
filter, then all of `settle` as the runner applies it. They run side by side,
each under its own time limit, and the table says which worked, how long CUDA
took to start and the last line of each failure.

Two probes also record the local-socket calls CUDA's start makes (socket, socketpair, connect, and
sends to an address; the filter lets only some through: isolation.filter_system_calls), through a
small library preloaded into the process (built here with the C compiler, where there is one): once
with no isolation, once under all of `settle`.

    python bench/cuda_in_namespaces.py --out bench/results    # on a GPU machine
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "sandbox"))

from forge_sandbox import isolation  # noqa: E402

CUDA = """
import sys, time, torch
print("socketlog: CUDA starts", file=sys.stderr, flush=True)
t = time.perf_counter()
torch.zeros(1, device="cuda").add_(1)
torch.cuda.synchronize()
print(f"cuda ok in {time.perf_counter() - t:.2f} s")
"""

# Isolation pieces applied in-process before CUDA starts (under the full namespace prefix).
PIECES = {
    "files": "isolation.restrict_files(own, [], readable, gpu=True)",
    "files+lock": "isolation.restrict_files(own, [], readable, gpu=True); isolation.lock_mounts()",
    "filter": "isolation.filter_system_calls()",
    "filter, local sockets": "isolation.filter_system_calls(local_sockets=True)",
    "settle": "print(isolation.settle(isolation.layout(own, readable, {}, gpu=True)))",
    "settle, local sockets": "print(isolation.settle(isolation.layout(own, readable, {}, gpu=True) | {'local_sockets': True}))",
    "settle, no filter": "print(isolation.settle(isolation.layout(own, readable, {}, gpu=True) | {'filter': False}))",
}


# Logs each call's arguments and result to stderr, then returns the real call's result.
SOCKET_LOG = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

static void *real(const char *name) { return dlsym(RTLD_NEXT, name); }

static void address(char *out, size_t n, const struct sockaddr *a) {
    if (!a) { snprintf(out, n, "none"); return; }
    if (a->sa_family != AF_UNIX) { snprintf(out, n, "family %d", a->sa_family); return; }
    const char *p = ((const struct sockaddr_un *)a)->sun_path;
    snprintf(out, n, p[0] ? "%.100s" : "@%.100s", p[0] ? p : p + 1);
}

int socket(int d, int t, int p) {
    int r = ((int (*)(int, int, int))real("socket"))(d, t, p), e = errno;
    fprintf(stderr, "socketlog: socket(%d, %#x, %d) = %d %s\n", d, t, p, r, r < 0 ? strerror(e) : "");
    errno = e; return r;
}
int socketpair(int d, int t, int p, int sv[2]) {
    int r = ((int (*)(int, int, int, int *))real("socketpair"))(d, t, p, sv), e = errno;
    fprintf(stderr, "socketlog: socketpair(%d, %#x, %d) = %d %s\n", d, t, p, r, r < 0 ? strerror(e) : "");
    errno = e; return r;
}
int connect(int fd, const struct sockaddr *a, socklen_t l) {
    char where[128]; address(where, sizeof where, a);
    int r = ((int (*)(int, const struct sockaddr *, socklen_t))real("connect"))(fd, a, l), e = errno;
    fprintf(stderr, "socketlog: connect(%d, %s) = %d %s\n", fd, where, r, r < 0 ? strerror(e) : "");
    errno = e; return r;
}
ssize_t sendto(int fd, const void *b, size_t n, int f, const struct sockaddr *a, socklen_t l) {
    ssize_t r = ((ssize_t (*)(int, const void *, size_t, int, const struct sockaddr *, socklen_t))real("sendto"))(fd, b, n, f, a, l);
    int e = errno;
    if (a) { char where[128]; address(where, sizeof where, a);
             fprintf(stderr, "socketlog: sendto(%d, %s) = %zd %s\n", fd, where, r, r < 0 ? strerror(e) : ""); }
    errno = e; return r;
}
ssize_t sendmsg(int fd, const struct msghdr *m, int f) {
    ssize_t r = ((ssize_t (*)(int, const struct msghdr *, int))real("sendmsg"))(fd, m, f);
    int e = errno;
    if (m && m->msg_name) { char where[128]; address(where, sizeof where, m->msg_name);
                            fprintf(stderr, "socketlog: sendmsg(%d, %s) = %zd %s\n", fd, where, r, r < 0 ? strerror(e) : ""); }
    errno = e; return r;
}
"""


def socket_log_library(folder: str) -> str | None:
    """The preloaded library that logs local-socket calls, built in ``folder``; None without a compiler."""
    source, library = os.path.join(folder, "socketlog.c"), os.path.join(folder, "socketlog.so")
    with open(source, "w") as f:
        f.write(SOCKET_LOG)
    for cc in ("cc", "gcc", "clang"):
        try:
            done = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", library, source, "-ldl"],
                                  capture_output=True, text=True, timeout=60)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return library
    return None


def probes() -> dict[str, list[str]]:
    unshare = "unshare"
    user = [unshare, "--user", "--map-root-user"]
    full, why_not = isolation.isolation_prefix()
    python = [sys.executable, "-c"]
    found = {
        "none": python + [CUDA],
        "user": user + python + [CUDA],
        "user+pid": user + ["--pid", "--fork", "--kill-child", "--mount-proc"] + python + [CUDA],
        "user+net": user + ["--net"] + python + [CUDA],
        "user+ipc": user + ["--ipc"] + python + [CUDA],
        "user+uts": user + ["--uts"] + python + [CUDA],
        "all namespaces": full + python + [CUDA] if full else ["false"],
    }
    sandbox = os.path.join(REPO, "sandbox")
    logger_folder = tempfile.mkdtemp(prefix="socketlog-")
    logger = socket_log_library(logger_folder)
    preload = ["env", f"LD_PRELOAD={logger}"]
    isolated = full or ["false"]
    for name, piece in PIECES.items():
        setup = (
            f"import sys; sys.path.insert(0, {sandbox!r}); from forge_sandbox import isolation\n"
            f"own = {tempfile.mkdtemp(prefix='probe-')!r}; readable = [{sandbox!r}, {logger_folder!r}]\n{piece}\n"
        )
        found[f"all namespaces, {name}"] = isolated + python + [setup + CUDA]
        if logger and name == "settle":
            found["all namespaces, settle, socket calls"] = isolated + preload + python + [setup + CUDA]
    if logger:
        found["none, socket calls"] = preload + python + [CUDA]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=40.0)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    args = parser.parse_args()
    started, procs = {}, {}
    for name, cmd in probes().items():
        started[name] = time.perf_counter()
        procs[name] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows = []
    for name, proc in procs.items():
        left = max(1.0, args.timeout - (time.perf_counter() - started[name]))
        try:
            out, err = proc.communicate(timeout=left)
            status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            status = f"no answer in {args.timeout:.0f} s"
        wall = time.perf_counter() - started[name]
        lines = err.strip().splitlines()
        calls = [line.removeprefix("socketlog: ") for line in lines if line.startswith("socketlog: ")]
        last = ([line for line in lines if not line.startswith("socketlog: ")] or [""])[-1][:300]
        rows.append({"probe": name, "status": status, "wall_s": round(wall, 2), "stdout": out.strip()[-300:],
                     "last_error_line": last, "socket_calls": calls[:200]})  # fmt: skip
        print(f"{name:34} {status:22} {wall:6.1f} s  {out.strip()[-80:]!r}  {last!r}", flush=True)
        if len(calls) > 1:  # more than the mark where CUDA starts
            print("    " + "\n    ".join(calls[:40]), flush=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"cuda-in-namespaces-{datetime.date.today().isoformat()}.json")
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
