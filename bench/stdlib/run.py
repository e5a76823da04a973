#!/usr/bin/env python3
"""Standard-library benchmark: each program under gpy, CPython and PyPy (when
pypy3 is installed) in one run; prints the median of the time each program
reports for its measured section (its "TIME" line: data generation and
start-up are left out) and the ratios of medians.

    python3 bench/stdlib/run.py [--gpy build/gpy] [--runs 5]

gpy / CPython and gpy / PyPy: above 1 means gpy is slower.
Every interpreter's other output must equal CPython's (it is checked), so
the programs use only what PyPy's Python 3.9 has (no Counter.total()).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGRAMS = ["counter_words", "deque_ops", "heapq_ops", "datetime_parse"]


def timed(cmd, runs):
    times, out = [], None
    for _ in range(runs):
        p = subprocess.run(cmd, capture_output=True, cwd=HERE)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr.decode()}")
        lines = p.stdout.decode().splitlines()
        times.append(float(lines[-1].split()[1]))
        out = "\n".join(lines[:-1])
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    pypy = shutil.which("pypy3")
    print(f"runs per program: {a.runs} (median of the measured section, seconds)"
          + ("" if pypy else "; pypy3 not installed: its column is skipped") + "\n")
    print("| program | gpy | CPython | PyPy | gpy / CPython | gpy / PyPy |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in PROGRAMS:
        src = name + ".gpy"
        g, gout = timed([a.gpy, src], a.runs)
        c, cout = timed([sys.executable, src], a.runs)
        if gout != cout:
            raise SystemExit(f"{name}: gpy printed {gout!r}, CPython {cout!r}")
        if pypy:
            p, pout = timed([pypy, src], a.runs)
            if pout != cout:
                raise SystemExit(f"{name}: PyPy printed {pout!r}, CPython {cout!r}")
            pcol, pratio = f"{p:.3f}", f"{g / p:.2f}"
        else:
            pcol = pratio = "-"
        print(f"| {name} | {g:.3f} | {c:.3f} | {pcol} | {g / c:.2f} | {pratio} |")


if __name__ == "__main__":
    main()
