#!/usr/bin/env python3
"""PTX quality table: gpy's PTX vs nvcc -O3's PTX for the same kernels.

For each kernel K in this folder (K.gpy and K.cu):
  - runs K.gpy with GPY_DUMP_PTX (the run is also its correctness check);
  - compiles K.cu with nvcc -O3 -ptx -arch=sm_80, once with 32-bit indices
    (IDX_T=int, the way CUDA C is usually written) and once with 64-bit
    indices (IDX_T=long long, what Numba's int64 cuda.grid(1) amounts to);
  - assembles every PTX with ptxas -v for sm_80 and sm_90 and reads registers,
    spills, stack frame, shared memory, and the size of .text.<entry> in the
    cubin (readelf -SW; this toolkit has no cuobjdump).
Bar (issue 6): gpy never spills where nvcc does not, and is within 10% of
nvcc's (32-bit index) registers and code size.

Usage: python3 bench/kernels/run.py [--gpy build/gpy] [--markdown]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = ["vector_add", "saxpy", "stencil", "matmul_tiled", "block_reduce",
           "histogram", "warp_reduce", "block_scan"]
ARCHS = ["sm_80", "sm_90"]
BAR = 1.10


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def entry_name(ptx_path):
    m = re.search(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(", open(ptx_path).read())
    return m.group(1) if m else None


def assemble(ptx, arch, work):
    """ptxas -v one PTX for one arch; returns a dict of stats or an error str."""
    entry = entry_name(ptx)
    cubin = os.path.join(work, os.path.basename(ptx) + "." + arch + ".cubin")
    r = sh(["ptxas", "-v", "-arch=" + arch, ptx, "-o", cubin])
    if r.returncode != 0:
        return "ptxas failed: " + r.stderr.strip().splitlines()[-1]
    log = r.stderr + r.stdout
    st = {"regs": 0, "spill_st": 0, "spill_ld": 0, "stack": 0, "smem": 0}
    m = re.search(r"Used (\d+) registers", log)
    if m:
        st["regs"] = int(m.group(1))
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    if m:
        st["stack"], st["spill_st"], st["spill_ld"] = map(int, m.groups())
    m = re.search(r"(\d+) bytes smem", log)
    if m:
        st["smem"] = int(m.group(1))
    st["code"] = None
    for line in sh(["readelf", "-SW", cubin]).stdout.splitlines():
        m = re.search(r"\]\s+(\.text\.\S+)\s+\S+\s+\S+\s+\S+\s+([0-9a-fA-F]+)\s", line)
        if m and m.group(1) == ".text." + entry:
            st["code"] = int(m.group(2), 16)
    return st


_peek = {}


def g_peek(gp, arch, work):
    """Cached assemble() of gpy's PTX (used for the 64-bit comparison column)."""
    if gp is None:
        return None
    if (gp, arch) not in _peek:
        _peek[(gp, arch)] = assemble(gp, arch, work)
    return _peek[(gp, arch)]


def gpy_ptx(gpy, name, work):
    """Runs name.gpy with GPY_DUMP_PTX; returns (ptx path or None, note)."""
    out = os.path.join(work, "gpy_" + name)
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, GPY_DUMP_PTX=out)
    r = sh([gpy, os.path.join(HERE, name + ".gpy")], env=env, timeout=300)
    text = (r.stdout + r.stderr).strip()
    if "not supported in kernels" in text or "is not supported" in text:
        return None, "unsupported"
    if r.returncode != 0 or not text.endswith("ok"):
        return None, "gpy failed: " + (text.splitlines() or ["?"])[-1]
    ptxs = sorted(glob.glob(os.path.join(out, name + "_kernel_*.ptx"))) or \
        sorted(glob.glob(os.path.join(out, "*.ptx")))
    if not ptxs:
        return None, "no PTX dumped"
    return ptxs[0], "ok"


def nvcc_ptx(name, idx, work):
    out = os.path.join(work, "nvcc_%s_%s.ptx" % (name, idx.replace(" ", "")))
    r = sh(["nvcc", "-O3", "-ptx", "-arch=sm_80", "-DIDX_T=" + idx,
            os.path.join(HERE, name + ".cu"), "-o", out])
    if r.returncode != 0:
        return None, "nvcc failed: " + r.stderr.strip()[-200:]
    return out, "ok"


def pair(a, b):
    return "%s/%s" % (a, b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=None, help="gpy binary (default: build*/gpy)")
    ap.add_argument("--keep", default=None, help="keep PTX/cubins in this folder")
    args = ap.parse_args()
    gpy = args.gpy
    if gpy is None:
        root = os.path.dirname(os.path.dirname(HERE))
        cands = [os.path.join(root, d, "gpy") for d in ("build", "build-pq")]
        gpy = next((c for c in cands if os.path.exists(c)), cands[0])
    for tool in ("nvcc", "ptxas", "readelf"):
        if shutil.which(tool) is None:
            sys.exit("run.py: '%s' not found on PATH" % tool)
    work = args.keep or tempfile.mkdtemp(prefix="gpy_ptxq_")
    os.makedirs(work, exist_ok=True)

    print("| kernel | arch | regs gpy/nvcc | spills (st+ld B) gpy/nvcc | stack gpy/nvcc "
          "| smem gpy/nvcc | code bytes gpy/nvcc | ratio regs, code | nvcc 64-bit idx: regs, code (gpy ratio) | bar |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    misses = 0
    for name in KERNELS:
        gp, gnote = gpy_ptx(gpy, name, work)
        np32, n32note = nvcc_ptx(name, "int", work)
        np64, _ = nvcc_ptx(name, "long long", work)
        for arch in ARCHS:
            if np32 is None:
                print("| %s | %s | %s |  |  |  |  |  |  |  |" % (name, arch, n32note))
                continue
            n = assemble(np32, arch, work)
            n64 = assemble(np64, arch, work) if np64 else None
            n64s = "%d, %s" % (n64["regs"], n64["code"]) if isinstance(n64, dict) else "-"
            if isinstance(n64, dict) and isinstance(g_peek(gp, arch, work), dict):
                g0 = g_peek(gp, arch, work)
                n64s += " (gpy %.2f, %.2f)" % (g0["regs"] / max(n64["regs"], 1),
                                              (g0["code"] or 0) / max(n64["code"] or 1, 1))
            if gp is None:
                print("| %s | %s | %s (nvcc %d regs) |  |  |  |  |  | %s | %s |" % (
                    name, arch, gnote, n["regs"], n64s, gnote))
                continue
            g = g_peek(gp, arch, work)
            if isinstance(g, str):
                print("| %s | %s | %s |  |  |  |  |  | %s | MISS |" % (name, arch, g, n64s))
                misses += 1
                continue
            gsp = g["spill_st"] + g["spill_ld"]
            nsp = n["spill_st"] + n["spill_ld"]
            rr = g["regs"] / max(n["regs"], 1)
            cr = (g["code"] or 0) / max(n["code"] or 1, 1)
            ok = (gsp == 0 or nsp > 0) and rr <= BAR and cr <= BAR
            misses += not ok
            why = []
            if not (gsp == 0 or nsp > 0):
                why.append("spills")
            if rr > BAR:
                why.append("regs")
            if cr > BAR:
                why.append("code")
            print("| %s | %s | %s | %s | %s | %s | %s | %.2f, %.2f | %s | %s |" % (
                name, arch, pair(g["regs"], n["regs"]), pair(gsp, nsp),
                pair(g["stack"], n["stack"]), pair(g["smem"], n["smem"]),
                pair(g["code"], n["code"]), rr, cr, n64s,
                "ok" if ok else "MISS (" + ",".join(why) + ")"))
    print()
    print("rows missing the bar: %d   (PTX and cubins in %s)" % (misses, work))


if __name__ == "__main__":
    main()
