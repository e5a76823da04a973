#!/usr/bin/env python3
"""json benchmark: loads and dumps of a ~20 MB document (records with ints,
floats, strings with escapes and non-ASCII text, nested lists and dicts)
under gpy, CPython and PyPy in one run; prints medians and ratios.

    python3 bench/stdlib/json_run.py [--gpy build/gpy]

ratio = other's time / gpy's time (above 1: gpy is faster).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def make_document(path):
    rng = random.Random(1)
    recs = [{"id": i, "name": "user%d" % i, "score": rng.random() * 1000, "tags": ["a", "bé", "c"][: i % 4],
             "active": i % 2 == 0, "nested": {"x": i, "y": [1.5, 2.5, None]}, "note": "line\n\"quoted\" ü"}
            for i in range(120000)]
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(recs))


def run(cmd, doc):
    p = subprocess.run(cmd + [os.path.join(HERE, "json_bench.gpy"), doc], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed:\n{p.stderr}")
    loads, dumps, same = p.stdout.split()
    if same != "True":
        raise SystemExit(f"{cmd[0]}: the round trip changed the document")
    return float(loads), float(dumps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        doc = os.path.join(tmp, "doc.json")
        make_document(doc)
        size = os.path.getsize(doc) / 1e6
        peers = [("gpy", [a.gpy]), ("CPython", [sys.executable])]
        if shutil.which("pypy3"):
            peers.append(("PyPy", ["pypy3"]))
        results = {name: run(cmd, doc) for name, cmd in peers}
    print(f"document: {size:.1f} MB; median of 5 (seconds)\n")
    print("| | " + " | ".join(results) + " | " + " | ".join(f"{n} / gpy" for n in results if n != "gpy") + " |")
    print("|---" * (1 + 2 * len(results) - 1) + "|")
    for i, op in enumerate(["loads", "dumps"]):
        g = results["gpy"][i]
        cells = [f"{results[n][i]:.3f}" for n in results] + [f"{results[n][i] / g:.2f}" for n in results if n != "gpy"]
        print(f"| {op} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
