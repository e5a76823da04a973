#!/usr/bin/env python3
"""Interactive prompt benchmark (issue 17): on a pseudo-terminal, the time
from exec to a ready prompt, and the latency of a double Tab listing
`numpy.ar<Tab><Tab>` (after `import numpy`), for gpy and `python3 -i`
(CPython's readline prompt with rlcompleter), same run. Medians of N runs.

usage: bench/repl/run.py [--gpy build/gpy] [-n 20]
"""
import argparse
import os
import pty
import select
import signal
import statistics
import sys
import time


def spawn(argv, env):
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    return pid, fd


def wait_for(fd, text, buf=b"", deadline=20.0):
    end = time.monotonic() + deadline
    while text not in buf:
        if time.monotonic() > end:
            raise RuntimeError("timeout waiting for %r: %r" % (text, buf[-300:]))
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            buf += os.read(fd, 65536)
    return buf


def finish(pid, fd):
    # Ctrl-D, then drain the output for up to 5 s; a child still running
    # then (a prompt waiting for more input) is killed, never waited on forever
    os.write(fd, b"\x15\x04")
    end = time.monotonic() + 5.0
    try:
        while time.monotonic() < end and select.select([fd], [], [], 0.2)[0]:
            if not os.read(fd, 65536):
                break
    except OSError:
        pass
    if os.waitpid(pid, os.WNOHANG) == (0, 0):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.close(fd)


def prompt_time(argv, env):
    t0 = time.perf_counter()
    pid, fd = spawn(argv, env)
    wait_for(fd, b">>> ")
    t = time.perf_counter() - t0
    finish(pid, fd)
    return t


def completion_time(argv, env, rounds):
    pid, fd = spawn(argv, env)
    wait_for(fd, b">>> ")
    os.write(fd, b"import numpy\r")
    wait_for(fd, b">>> ", wait_for(fd, b"import numpy"))
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        os.write(fd, b"numpy.ar\t\t")
        wait_for(fd, b"argmax")
        times.append(time.perf_counter() - t0)
        os.write(fd, b"\x15")  # Ctrl-U: kill the line
        time.sleep(0.05)
        try:
            while select.select([fd], [], [], 0.05)[0]:
                os.read(fd, 65536)
        except OSError:
            pass
    finish(pid, fd)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default="build/gpy")
    ap.add_argument("-n", type=int, default=20)
    a = ap.parse_args()
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", GPY_HISTORY="", GPY_DEVICE="cpu",
               PYTHONSTARTUP="", PYTHON_HISTORY="/dev/null")
    env.pop("PYTHONSTARTUP")
    gpy = [os.path.abspath(a.gpy)]
    py = [sys.executable, "-q", "-i"]  # the CPython that has numpy
    g = [prompt_time(gpy, env) for _ in range(a.n)]
    p = [prompt_time(py, env) for _ in range(a.n)]
    print("exec to ready prompt (median of %d): gpy %.2f ms, python3 -i %.2f ms, ratio python3/gpy %.1fx"
          % (a.n, statistics.median(g) * 1e3, statistics.median(p) * 1e3, statistics.median(p) / statistics.median(g)))
    gc = completion_time(gpy, env, a.n)
    try:
        pc = "%.2f ms" % (statistics.median(completion_time(py, env, a.n)) * 1e3)
    except RuntimeError as e:  # a CPython built without readline completes nothing
        pc = "n/a (%s)" % str(e)[:60]
    print("numpy.ar<Tab><Tab> to the listing (median of %d): gpy %.2f ms, python3 -i %s"
          % (a.n, statistics.median(gc) * 1e3, pc))


if __name__ == "__main__":
    main()
