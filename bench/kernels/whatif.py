#!/usr/bin/env python3
"""What-if experiments behind the diagnosis in README.md.

Takes gpy's optimized NVPTX IR for each kernel (kernel.inspect_llvm() while
GPY_DUMP_PTX is set), applies one candidate compiler change at a time, re-runs
opt -O3 / llc (LLVM 19) and ptxas -v, and prints registers and .text size, so
each suggested fix comes with a measured effect. Changes:
  noalias   noalias on every pointer parameter (-> ld.global.nc)
  contract  llc -fp-contract=fast (what the 'contract' fast-math flag gives)
  range     llvm.assume(0 <= p < 2^31) on every i64 parameter (array shapes
            and strides; a launch-time specialization "all extents < 2^31")
  shortptr  32-bit shared/local pointers (-nvptx-short-ptr + datalayout p3:32)
Usage: python3 bench/kernels/whatif.py [--gpy build/gpy]
"""
import argparse, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LLVM = "/usr/lib/llvm-19/bin/"
KERNELS = ["vector_add", "saxpy", "stencil", "matmul_tiled", "block_reduce",
           "histogram", "block_scan"]


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def gpu_ir(gpy, name, work):
    src = open(os.path.join(HERE, name + ".gpy")).read()
    src = re.sub(r"(?m)^print\(.*$", "pass", src)
    src += "\nd = %s.inspect_llvm()\nfor key in d:\n    print(d[key])\n" % name
    path = os.path.join(work, name + "_ir.gpy")
    open(path, "w").write(src)
    r = sh([gpy, path], env=dict(os.environ, GPY_DUMP_PTX=work))
    return r.stdout if "nvptx64" in r.stdout else None


def transform(ir, what):
    if "noalias" in what:
        ir = re.sub(r"(define ptx_kernel[^\n]*)", lambda m: m.group(1).replace("ptr nocapture", "ptr noalias nocapture"), ir)
    if "range" in what:
        m = re.search(r"define ptx_kernel void @\S+\(([^)]*)\)[^{]*\{\n", ir)
        params = re.findall(r"i64 (%\d+)", m.group(1))
        body = "".join("  %%as%s = icmp ult i64 %s, 2147483648\n  call void @llvm.assume(i1 %%as%s)\n"
                       % (p[1:], p, p[1:]) for p in params)
        at = m.end()
        lab = re.match(r"[\w.]+:[^\n]*\n", ir[at:])  # a named entry block: insert after its label
        if lab:
            at += lab.end()
        ir = ir[:at] + body + ir[at:]
        if "declare void @llvm.assume" not in ir:
            ir += "\ndeclare void @llvm.assume(i1)\n"
    if "shortptr" in what:
        ir = ir.replace('target datalayout = "e-', 'target datalayout = "e-p3:32:32-p4:32:32-p5:32:32-')
    return ir


def measure(ir, what, work, tag):
    ll = os.path.join(work, tag + ".ll")
    open(ll, "w").write(ir)
    opt = os.path.join(work, tag + ".opt.ll")
    r = sh([LLVM + "opt", "-O3", "-mtriple=nvptx64-nvidia-cuda", "-mcpu=sm_80", ll, "-S", "-o", opt])
    if r.returncode:
        return "opt: " + r.stderr.strip().splitlines()[0]
    ptx = os.path.join(work, tag + ".ptx")
    llc = [LLVM + "llc", "-O3", "-mcpu=sm_80", opt, "-o", ptx]
    if "contract" in what:
        llc.append("-fp-contract=fast")
    if "shortptr" in what:
        llc.append("-nvptx-short-ptr")
    r = sh(llc)
    if r.returncode:
        return "llc: " + r.stderr.strip().splitlines()[0]
    out = []
    for arch in ("sm_80", "sm_90"):
        cub = ptx + "." + arch + ".cubin"
        r = sh(["ptxas", "-v", "-arch=" + arch, ptx, "-o", cub])
        if r.returncode:
            return "ptxas: " + r.stderr.strip().splitlines()[-1]
        regs = re.search(r"Used (\d+) registers", r.stderr).group(1)
        size = "?"
        for line in sh(["readelf", "-SW", cub]).stdout.splitlines():
            m = re.search(r"\]\s+\.text\.\S+\s+\S+\s+\S+\s+\S+\s+([0-9a-fA-F]+)\s", line)
            if m:
                size = str(int(m.group(1), 16))
        out.append("%s/%s" % (regs, size))
    return "  ".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "gpy"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gpy_whatif_")
    variants = ["base", "noalias", "contract", "range", "shortptr", "noalias+contract+range+shortptr"]
    print("regs/code bytes for sm_80  sm_90 (gpy IR re-run through LLVM 19 opt -O3 + llc)")
    print("| kernel | " + " | ".join(variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for name in KERNELS:
        ir = gpu_ir(args.gpy, name, work)
        if ir is None:
            print("| %s | no GPU IR |" % name)
            continue
        cells = [measure(transform(ir, v), v, work, name + "_" + v.replace("+", "_")) for v in variants]
        print("| %s | %s |" % (name, " | ".join(cells)))
    print("\n(files in %s)" % work)


if __name__ == "__main__":
    main()
