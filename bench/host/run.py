#!/usr/bin/env python3
"""Host-VM benchmark: times each program under gpy, CPython, PyPy and Lua 5.4
(where a .lua twin is written) in one run and prints medians and ratios as a
markdown table.

    python3 bench/host/run.py [--gpy build/gpy] [--runs 5]

speedup = CPython time / gpy time (above 1: gpy is faster);
vs Lua  = gpy time / Lua time (above 1: gpy is slower than Lua).
gpy's output must equal CPython's for each program (it is checked).
"""
import argparse
import math
import os
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import timing  # noqa: E402  (bench/timing.py)

PROGRAMS = ["fib", "loop", "float_list", "matmul", "trees", "words", "classes", "pipeline"]


def timed(cmd, runs):
    return timing.timed(cmd, runs, HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    a.gpy = os.path.abspath(a.gpy)  # the programs run in their own folder
    lua = shutil.which("lua5.4")
    pypy = shutil.which("pypy3")
    print(f"runs per program: {a.runs} (median wall time, seconds)\n")
    print("| program | gpy | CPython | PyPy | Lua 5.4 | speedup vs CPython | gpy / PyPy | gpy / Lua |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    speedups = []
    for name in PROGRAMS:
        g, gout = timed([a.gpy, name + ".gpy"], a.runs)
        p, pout = timed([sys.executable, name + ".gpy"], a.runs)
        if gout != pout:
            raise SystemExit(f"{name}: gpy printed {gout!r}, CPython {pout!r}")
        has_twin = os.path.exists(os.path.join(HERE, name + ".lua"))
        l = timed([lua, name + ".lua"], a.runs)[0] if lua and has_twin else float("nan")
        y = timed([pypy, name + ".gpy"], a.runs)[0] if pypy else float("nan")
        speedups.append(p / g)
        print(f"| {name} | {g:.3f} | {p:.3f} | {y:.3f} | {l:.3f} | {p / g:.2f}x | {g / y:.2f} | {g / l:.2f} |")
    geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    print(f"\ngeometric mean speedup vs CPython: {geo:.2f}x; slowest program: {min(speedups):.2f}x")
    st = statistics.median(timed([a.gpy, "-c", "pass"], 1)[0] for _ in range(21))
    sp = statistics.median(timed([sys.executable, "-c", "pass"], 1)[0] for _ in range(21))
    print(f"start-up (`-c pass`, median of 21): gpy {st * 1000:.1f} ms, CPython {sp * 1000:.1f} ms")


if __name__ == "__main__":
    main()
