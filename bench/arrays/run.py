#!/usr/bin/env python3
"""Array benchmark: runs bench/arrays/arrays.gpy under gpy and under CPython
with real numpy in one run and prints the medians and ratios as a markdown
table.

    python3 bench/arrays/run.py [--gpy build/gpy] [--n 10000000]

ratio = gpy time / numpy time (at most 1.5 meets the bar of issue 4; below 1
gpy is faster). Each program times every operation itself (median of 7 runs
after a warm-up), so start-up and array creation are not counted. The
'check' lines (results, compared within the dtype's precision) must agree.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BAR = 1.5


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, cwd=HERE)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr.decode()}")
    times, checks = {}, []
    for line in p.stdout.decode().splitlines():
        if line.startswith("check "):
            checks.append(line)
        else:
            name, secs = line.split()
            times[name] = float(secs)
    return times, checks


def agree(x, y):
    """Check lines agree: same name and dtype, values within the dtype's
    precision (float32 sums are accumulated differently: numpy's BLAS and
    pairwise sums against gpy's loops)."""
    _, name, xv, xdt = x.split()
    _, yname, yv, ydt = y.split()
    tol = 1e-4 if name.startswith("float32") else 1e-9
    return name == yname and xdt == ydt and abs(float(xv) - float(yv)) <= tol * max(1.0, abs(float(yv)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    ap.add_argument("--n", type=int, default=10_000_000)
    a = ap.parse_args()
    g, gchecks = run([a.gpy, "arrays.gpy", str(a.n)])
    p, pchecks = run([sys.executable, "arrays.gpy", str(a.n)])
    bad = [f"  gpy:   {x}\n  numpy: {y}" for x, y in zip(gchecks, pchecks) if not agree(x, y)]
    if bad or len(gchecks) != len(pchecks):
        raise SystemExit("results differ:\n" + "\n".join(bad or ["(different number of checks)"]))
    print(f"N = {a.n} elements; median of 7 runs, milliseconds\n")
    print("| operation | gpy | numpy | gpy / numpy |")
    print("|---|---:|---:|---:|")
    worst = 0.0
    for name, t in g.items():
        r = t / p[name]
        worst = max(worst, r)
        flag = "" if r <= BAR else " (over the bar)"
        print(f"| {name} | {t * 1000:.2f} | {p[name] * 1000:.2f} | {r:.2f}{flag} |")
    print(f"\nworst ratio: {worst:.2f} (bar: {BAR})")


if __name__ == "__main__":
    main()
