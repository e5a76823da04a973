#!/usr/bin/env python3
"""Interactive prompt benchmark (issue 17): on a pseudo-terminal, the time
from exec to a ready prompt, and the latency of a double Tab listing
`numpy.ar<Tab><Tab>` (after `import numpy`), and Ctrl-C to the next prompt
while a host loop runs, for gpy and `python3 -i` (CPython's readline
prompt with rlcompleter), same run; and for gpy Ctrl-C to the next prompt
while a long CPU-device kernel runs. Medians of N runs.

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


SPIN_KERNEL = b"\x1b[200~" + b"\n".join([
    b"from numba import cuda",
    b"import numpy as np",
    b"",
    b"@cuda.jit",
    b"def spin(out, n):",
    b"    i = cuda.grid(1)",
    b"    s = 1",
    b"    for k in range(n):",
    b"        s += k % 7",
    b"    out[i % out.shape[0]] = s",
    b"",
    b"out = cuda.to_device(np.zeros(64 * 4000, dtype=np.int64))",
    b"spin[1, 64](out, 10)",
]) + b"\x1b[201~\r"


def interrupt_time(argv, env, rounds, setup, statement):
    """Ctrl-C while statement runs (it runs for seconds) to the next prompt."""
    pid, fd = spawn(argv, env)
    buf = wait_for(fd, b">>> ")
    if setup:
        os.write(fd, setup)
        buf = wait_for(fd, b">>> ", wait_for(fd, b"spin[1, 64]"))
    times = []
    for _ in range(rounds):
        os.write(fd, statement)
        time.sleep(0.4)  # well inside the loop or kernel
        mark = len(buf)
        t0 = time.perf_counter()
        os.write(fd, b"\x03")
        buf = wait_for(fd, b"KeyboardInterrupt", buf)
        end = buf.rindex(b"KeyboardInterrupt")
        buf = wait_for(fd, b">>> ", buf[:end + 1]) if b">>> " not in buf[end:] else buf
        times.append(time.perf_counter() - t0)
        del mark
        time.sleep(0.05)
        try:
            while select.select([fd], [], [], 0.05)[0]:
                buf += os.read(fd, 65536)
        except OSError:
            pass
        buf = b""
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
    loop = b"while True: pass\r\r"
    gl = interrupt_time(gpy, env, a.n, None, loop)
    pl = interrupt_time(py, env, a.n, None, loop)
    print("Ctrl-C in a host loop to the prompt (median of %d): gpy %.2f ms, python3 -i %.2f ms"
          % (a.n, statistics.median(gl) * 1e3, statistics.median(pl) * 1e3))
    gk = interrupt_time(gpy, env, a.n, SPIN_KERNEL, b"spin[1000000, 64](out, 20000)\r")
    # a kernel stops at its next block boundary: blocks here take ~1 ms each
    print("Ctrl-C in a CPU-device kernel (10^6 blocks of 64 threads) to the prompt (median of %d): gpy %.2f ms"
          % (a.n, statistics.median(gk) * 1e3))


if __name__ == "__main__":
    main()
