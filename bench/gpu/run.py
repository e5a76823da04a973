#!/usr/bin/env python3
"""gpy vs Numba-CUDA on a real GPU: the same program (gpu_kernels.gpy) under each.

    python3 bench/gpu/run.py --gpy build/gpy [--runs 3]

Needs an NVIDIA GPU and driver, and numba-cuda for the peer column. Prints,
per measurement, the median over runs of each runtime and the ratio
gpy/numba (below 1: gpy is faster). GPY_DEVICE=cuda forces gpy onto the GPU.
"""
import argparse, os, subprocess, sys, statistics

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = os.path.join(HERE, "gpu_kernels.gpy")


def run(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d):\n%s%s" % (cmd[0], p.returncode, p.stdout, p.stderr))
    res, check = {}, None
    for line in p.stdout.splitlines():
        parts = line.split()
        if parts[:1] == ["RESULT"]:
            res[parts[1]] = (float(parts[2]), parts[3])
        elif parts[:1] == ["CHECK"]:
            check = parts[1]
    return res, check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default="build/gpy")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-numba", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ, GPY_DEVICE="cuda")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    cols = {"gpy": [args.gpy, PROG]}
    if not args.no_numba:
        cols["numba"] = [sys.executable, PROG]
    data = {}
    for name, cmd in cols.items():
        for _ in range(args.runs):
            res, check = run(cmd, env)
            print("%s run: CHECK %s" % (name, check), flush=True)
            if check != "ok":
                raise SystemExit("%s computed wrong results" % name)
            for k, (v, unit) in res.items():
                data.setdefault(k, {}).setdefault(name, []).append(v)
                data[k]["unit"] = unit
    print("%-26s %12s %12s %8s" % ("measurement", "gpy", "numba", "ratio"))
    for k, row in data.items():
        g = statistics.median(row["gpy"])
        n = statistics.median(row["numba"]) if "numba" in row else float("nan")
        print("%-26s %10.4g %-2s %9.4g %-2s %7.2fx" % (k, g, row["unit"], n, row["unit"], g / n if n else float("nan")))


if __name__ == "__main__":
    main()
