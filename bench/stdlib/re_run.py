#!/usr/bin/env python3
"""re benchmark: eight pattern workloads (bench/stdlib/re_bench.gpy) over a
~10 MB generated log text under gpy, CPython and PyPy in one run; prints the
medians and ratios (the results' checksums must agree).

    python3 bench/stdlib/re_run.py [--gpy build/gpy]

ratio = other's time / gpy's time (above 1: gpy is faster).
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def make_text(path):
    rng = random.Random(7)
    levels = ["INFO", "WARN", "ERROR", "debug", "Error"]
    words = ["disk", "gpu", "kernel", "launch", "naïve", "café", "timeout", "retry", "ok", "user"]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(150000):
            f.write("2024-%02d-%02d %s user%d %s %s %d mail%d@example.com\n" % (
                1 + i % 12, 1 + i % 28, rng.choice(levels), rng.randrange(5000), rng.choice(words),
                rng.choice(words), rng.randrange(10**6), i % 977))


def run(cmd, path):
    p = subprocess.run(cmd + [os.path.join(HERE, "re_bench.gpy"), path], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed:\n{p.stderr}")
    times, check = {}, None
    for line in p.stdout.splitlines():
        name, value = line.split(" ", 1)
        if name == "check":
            check = value
        else:
            times[name] = float(value)
    return times, check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "log.txt")
        make_text(path)
        size = os.path.getsize(path) / 1e6
        peers = [("gpy", [a.gpy]), ("CPython", [sys.executable])]
        if shutil.which("pypy3"):
            peers.append(("PyPy", ["pypy3"]))
        results = {}
        for name, cmd in peers:
            results[name] = run(cmd, path)
    checks = {n: r[1] for n, r in results.items()}
    if len(set(checks.values())) != 1:
        raise SystemExit(f"results differ: {checks}")
    print(f"text: {size:.1f} MB; median of 5 (seconds)\n")
    names = list(results)
    print("| operation | " + " | ".join(names) + " | " + " | ".join(f"{n} / gpy" for n in names[1:]) + " |")
    print("|---" * (1 + 2 * len(names) - 1) + "|")
    for op in results["gpy"][0]:
        g = results["gpy"][0][op]
        cells = [f"{results[n][0][op]:.4f}" for n in names] + [f"{results[n][0][op] / g:.2f}" for n in names[1:]]
        print(f"| {op} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
