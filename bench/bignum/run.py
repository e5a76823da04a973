#!/usr/bin/env python3
"""Big-integer benchmark: times each program under gpy, CPython and PyPy in
one run, checks their outputs are equal, and prints medians and ratios as a
markdown table.

    python3 bench/bignum/run.py [--gpy build/gpy] [--runs 3]

speedup = CPython time / gpy time (above 1: gpy is faster);
vs PyPy = PyPy time / gpy time (above 1: gpy is faster).
"""
import argparse
import math
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import timing  # noqa: E402  (bench/timing.py)

PROGRAMS = ["pidigits", "factorial", "to_str", "from_str"]


def timed(cmd, runs):
    return timing.timed(cmd, runs, HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    a.gpy = os.path.abspath(a.gpy)  # the programs run in their own folder
    pypy = shutil.which("pypy3")
    print(f"runs per program: {a.runs} (median wall time, seconds)\n")
    print("| program | gpy | CPython | PyPy | speedup vs CPython | speedup vs PyPy |")
    print("|---|---:|---:|---:|---:|---:|")
    speedups = []
    for name in PROGRAMS:
        g, gout = timed([a.gpy, name + ".gpy"], a.runs)
        p, pout = timed([sys.executable, name + ".gpy"], a.runs)
        if gout != pout:
            raise SystemExit(f"{name}: gpy's output differs from CPython's:\n{gout}\n---\n{pout}")
        y = None
        if pypy:
            y, yout = timed([pypy, name + ".gpy"], a.runs)
            if yout != pout:
                raise SystemExit(f"{name}: PyPy's output differs from CPython's:\n{yout}\n---\n{pout}")
        speedups.append(p / g)
        ys = f"{y:.3f}" if y is not None else "n/a"
        yr = f"{y / g:.2f}x" if y is not None else "n/a"
        print(f"| {name} | {g:.3f} | {p:.3f} | {ys} | {p / g:.2f}x | {yr} |")
    geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    print(f"\ngeometric mean speedup vs CPython: {geo:.2f}x")


if __name__ == "__main__":
    main()
