"""Timing shared by the bench/*/run.py scripts that run whole programs."""
import statistics
import subprocess
import time


def timed(cmd, runs, cwd):
    """Runs cmd `runs` times in cwd; returns (median seconds, last stdout).
    A failing run stops the benchmark with the program's stderr."""
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, cwd=cwd)
        times.append(time.perf_counter() - t0)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr.decode()}")
        out = p.stdout.decode()
    return statistics.median(times), out
