#!/usr/bin/env python3
"""Kernel-compiler and CPU-device benchmarks (issue 5's Performance section).

    python3 bench/jit/run.py [--gpy build/gpy] [--runs 11] [--rounds 3] [--quick]

Reports medians, with each peer measured in the same run:
  a. first compile of the seed kernel inside gpy (compile_ptx, and the first
     CPU-device launch) beside `nvcc -ptx` of bench/jit/vadd.cu, and the
     first CPU-device launch of a vector add, a barrier block sum and a
     sin/exp kernel (compile_cpu.gpy);
  b. host-side cost of a cached launch (1 block, 1 thread);
  c. examples/vector_add.gpy end to end on the CPU device beside python3 +
     Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) on the same file;
  d. CPU-device kernels (bench/jit/kernels.gpy) vs the same loops in C
     (bench/jit/kernels.c, gcc -O2), with GPY_CPU_THREADS=1 and 2.
Benchmarks, not tests: no thresholds; the bars of the issue are printed
beside the numbers.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd, env=None, timeout=600):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def parse(out):
    """'name value [checksum]' lines → {name: [values...]}."""
    res = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            try:
                res.setdefault(parts[0], []).append(tuple(float(p) for p in parts[1:]))
            except ValueError:
                pass
    return res


def wall(cmd, env=None, timeout=600):
    t = time.perf_counter()
    run(cmd, env, timeout)
    return time.perf_counter() - t


def ms(s):
    return "%.3f ms" % (s * 1e3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the kernel comparison (d)")
    ap.add_argument("--sim-timeout", type=int, default=120)
    ap.add_argument("--quick", action="store_true", help="skip the Numba simulator peer")
    args = ap.parse_args()
    gpy = os.path.abspath(args.gpy)
    nruns = args.runs
    cpu_env = {"GPY_DEVICE": "cpu"}
    load0 = os.getloadavg()[0]
    rows = []

    # a. first compile. Importing numba/cuda starts loading the compiler on
    # a background thread; "now" compiles right after the import (waiting for
    # the load), "after 50 ms" stands for a program's own set-up before its
    # first kernel (compile.gpy's argument).
    res = {}
    for _ in range(nruns):
        for setup in ("0", "0.05"):
            r = parse(run([gpy, os.path.join(HERE, "compile.gpy"), setup], cpu_env))
            for key in ("import", "ptx_first", "ptx_again", "cpu_first"):
                if key in r:
                    res.setdefault((setup, key), []).append(r[key][0][0])
    med = lambda setup, key: ms(statistics.median(res[(setup, key)])) if (setup, key) in res else "-"
    rows.append(("a", "import numba / from numba import cuda", med("0", "import"), ""))
    rows.append(("a", "seed kernel: compile_ptx, first in process, right after the import", med("0", "ptx_first"), ""))
    rows.append(("a", "seed kernel: compile_ptx, first in process, 50 ms after the import", med("0.05", "ptx_first"),
                 "<= 3 ms"))
    rows.append(("a", "seed kernel: compile_ptx, second kernel", med("0.05", "ptx_again"), "<= 3 ms"))
    rows.append(("a", "seed kernel: first CPU-device launch, right after compile_ptx", med("0", "cpu_first"), ""))
    rows.append(("a", "seed kernel: first CPU-device launch, 50 ms after the import", med("0.05", "cpu_first"), ""))
    # first CPU-device launch of three kinds of kernel (compile_cpu.gpy)
    cres = {}
    for _ in range(nruns):
        for key, vals in parse(run([gpy, os.path.join(HERE, "compile_cpu.gpy")], cpu_env)).items():
            cres.setdefault(key, []).append(vals[0][0])
    for key, label in (("vadd", "first CPU-device launch: vector add (block loop)"),
                       ("blocksum", "first CPU-device launch: shared-memory block sum (region loops)"),
                       ("math", "first CPU-device launch: sin/exp kernel (libm), third in process")):
        rows.append(("a", label, ms(statistics.median(cres[key])) if key in cres else "-", ""))
    st = [wall([gpy, "-c", "pass"]) for _ in range(nruns)]
    rows.append(("a", "gpy -c pass (start-up, for scale)", ms(statistics.median(st)), ""))
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if os.path.exists(nvcc):
        with tempfile.TemporaryDirectory() as tmp:
            ts = [wall([nvcc, "-ptx", "-arch=sm_80", "-o", os.path.join(tmp, "vadd.ptx"),
                        os.path.join(HERE, "vadd.cu")]) for _ in range(nruns)]
        rows.append(("a", "peer: nvcc -ptx -arch=sm_80 vadd.cu (process)", ms(statistics.median(ts)), ""))
    else:
        rows.append(("a", "peer: nvcc not found", "-", ""))

    # b. cached launch
    r = parse(run([gpy, os.path.join(HERE, "dispatch.gpy")], cpu_env))
    for key, label in (("launch_host_array", "cached launch, host array arg"),
                       ("launch_device_array", "cached launch, device array arg"),
                       ("empty_loop", "  (empty gpy loop iteration)")):
        rows.append(("b", label, "%.3f us" % (statistics.median(v[0] for v in r[key]) * 1e6),
                     "<= 1 us" if key != "empty_loop" else ""))

    # c. seed program end to end
    seed = os.path.join(ROOT, "examples", "vector_add.gpy")
    ts = [wall([gpy, seed], cpu_env) for _ in range(nruns)]
    rows.append(("c", "examples/vector_add.gpy, gpy CPU device", ms(statistics.median(ts)), "<= 300 ms"))
    if not args.quick:
        try:
            # Numba's simulator only swaps in its fake `cuda` module for a
            # global named cuda, so numba.cuda.grid(1) inside the kernel fails
            # there: run the same program spelled `from numba import cuda`.
            src = open(seed).read().replace("numba.cuda.", "cuda.")
            with tempfile.TemporaryDirectory() as tmp:
                peer = os.path.join(tmp, "vector_add_sim.py")
                with open(peer, "w") as f:
                    f.write("from numba import cuda\n" + src)
                t = wall([sys.executable, peer], {"NUMBA_ENABLE_CUDASIM": "1"}, timeout=args.sim_timeout)
            rows.append(("c", "peer: python3, Numba CUDA simulator (1 run, cuda.grid spelling)", ms(t), ""))
        except subprocess.TimeoutExpired:
            rows.append(("c", "peer: python3 + NUMBA_ENABLE_CUDASIM=1", "> %d s (timed out)" % args.sim_timeout, ""))
        except RuntimeError as e:
            rows.append(("c", "peer: numba simulator failed: %s" % str(e).splitlines()[0], "-", ""))

    # d. kernels vs C: rounds alternate the three configurations so that
    # background load hits them alike; each takes the median over rounds of
    # the program's own median.
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "kernels")
        run(["gcc", "-std=c17", "-O2", "-o", exe, os.path.join(HERE, "kernels.c")])
        res = {"c": {}, "1": {}, "2": {}}
        kern = os.path.join(HERE, "kernels.gpy")
        for _ in range(args.rounds):
            for cfg, cmd, env in (("c", [exe], {}), ("1", [gpy, kern], dict(cpu_env, GPY_CPU_THREADS="1")),
                                  ("2", [gpy, kern], dict(cpu_env, GPY_CPU_THREADS="2"))):
                for name, vals in parse(run(cmd, env)).items():
                    res[cfg].setdefault(name, []).append(vals[0])
    for name in ("saxpy", "stencil", "mandelbrot", "reduction"):
        tc, t1, t2 = (statistics.median(v[0] for v in res[cfg][name]) for cfg in ("c", "1", "2"))
        sc = res["c"][name][0][1]
        sums = [v[1] for cfg in ("1", "2") for v in res[cfg][name]]
        ok = all(abs(s - sc) <= 1e-9 * max(1.0, abs(sc)) for s in sums)
        rows.append(("d", "%s: C gcc -O2 (1 core)" % name, ms(tc), ""))
        rows.append(("d", "%s: gpy, 1 worker" % name, ms(t1) + "  (%.2fx C)" % (t1 / tc), "<= 1.5x C"))
        rows.append(("d", "%s: gpy, 2 workers" % name, ms(t2) + "  (%.2fx C, %.2fx 1 worker)" % (t2 / tc, t2 / t1),
                     "< 1 worker"))
        rows.append(("d", "%s: results match C" % name, "yes" if ok else "NO: C %r, gpy %r" % (sc, sums), ""))

    rows.append(("", "load average (1 min) at start / end", "%.2f / %.2f" % (load0, os.getloadavg()[0]), ""))
    w = max(len(r[1]) for r in rows)
    print("| | measurement | median | bar |")
    print("|---|---|---|---|")
    for sec, label, val, bar in rows:
        print("| %s | %s | %s | %s |" % (sec, label.ljust(w), val, bar))


if __name__ == "__main__":
    main()
