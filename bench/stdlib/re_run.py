#!/usr/bin/env python3
"""re benchmark: several patterns (findall, sub with a template, split,
finditer, case-insensitive search) over a ~10 MB text with some non-ASCII
words, under gpy, CPython and PyPy in one run; prints medians and ratios.

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

WORDS = ("the quick brown fox jumps over lazy dog hexagon matrix kernel thread über café naïve "
         "straße device memory launch grid block The THE").split()


def make_text(path):
    rng = random.Random(7)
    lines = []
    size = 0
    while size < 10_000_000:
        w = [rng.choice(WORDS) for _ in range(rng.randrange(4, 14))]
        if rng.random() < 0.2:
            w.append("user%d@host%d.example.org" % (rng.randrange(1000), rng.randrange(50)))
        if rng.random() < 0.2:
            w.append("%04d-%02d-%02d" % (rng.randrange(1990, 2030), rng.randrange(1, 13), rng.randrange(1, 29)))
        if rng.random() < 0.3:
            w.append(str(rng.randrange(10**6)))
        line = " ".join(w)
        lines.append(line)
        size += len(line.encode()) + 1
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def run(cmd, doc):
    p = subprocess.run(cmd + [os.path.join(HERE, "re_bench.gpy"), doc], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed:\n{p.stderr}")
    out = {}
    for line in p.stdout.split("\n"):
        if line:
            name, t, digest = line.split()
            out[name] = (float(t), digest)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        doc = os.path.join(tmp, "text.txt")
        make_text(doc)
        size = os.path.getsize(doc) / 1e6
        peers = [("gpy", [a.gpy]), ("CPython", [sys.executable])]
        if shutil.which("pypy3"):
            peers.append(("PyPy", ["pypy3"]))
        results = {name: run(cmd, doc) for name, cmd in peers}
    print(f"text: {size:.1f} MB; median of 5 (seconds)\n")
    print("| | " + " | ".join(results) + " | " + " | ".join(f"{n} / gpy" for n in results if n != "gpy") + " |")
    print("|---" * (1 + 2 * len(results) - 1) + "|")
    for op in results["gpy"]:
        g = results["gpy"][op][0]
        for n in results:
            if results[n][op][1] != results["gpy"][op][1]:
                raise SystemExit(f"{op}: {n} gives a different result than gpy")
        cells = [f"{results[n][op][0]:.3f}" for n in results] + [
            f"{results[n][op][0] / g:.2f}" for n in results if n != "gpy"]
        print(f"| {op} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
