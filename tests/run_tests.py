#!/usr/bin/env python3
"""gpy test runner.

Suites (each a folder of .gpy programs under tests/):
  lang     stdout and exit status must equal CPython's for the same program
           (CPython is the oracle); programs whose first line is
           '# oracle: file' are gpy-only and compare against NAME.out, which
           was checked by hand.
  errors   programs that fail: exit status and stderr must equal CPython's,
           except the '~~~^^^' marker lines CPython 3.11 adds under some
           traceback lines (gpy does not print them; docs/language.md).
  hostile  malformed and hostile input: gpy must exit with status 1 and an
           error message, never crash (signal), hang (timeout) or exit 0.
  cli      shell scripts exercising the command line; they exit 0 on success.
  kernels  CUDA kernels (@cuda.jit) run on the CPU device: stdout and exit
           status must equal those of the Numba CUDA simulator running the
           same program (NUMBA_ENABLE_CUDASIM=1 python3 prog.gpy); programs
           whose first line is '# oracle: file' compare against NAME.out,
           checked by hand (for what the simulator lacks). gpy runs with
           GPY_DUMP_PTX=<tmpdir>: every PTX file a program's kernels produce
           must assemble with `ptxas -arch=sm_80` and `-arch=sm_90`, and a
           program must produce at least one unless a line '# ptx: none'
           says it compiles no kernel. A missing ptxas fails the suite.

Prints one line per failure and ends with 'N passed, N failed'.
"""
import argparse
import concurrent.futures as cf
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 20
# the Numba simulator is an oracle, not the product: it polls a Python thread
# per CUDA thread (about 1 s per launch), so it gets more time on 2 busy cores
ORACLE_TIMEOUT = 90

MARKER_LINE = re.compile(r"^\s*[~^]+\s*$")


def run(cmd, cwd, stdin=None, env=None, timeout=TIMEOUT):
    try:
        p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def oracle_kind(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline()
    m = re.match(r"#\s*oracle:\s*(\w+)", first)
    return m.group(1) if m else "python"


def strip_markers(text):
    return "\n".join(l for l in text.split("\n") if not MARKER_LINE.match(l))


def first_diff(a, b):
    al, bl = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return f"line {i + 1}: expected {x!r}, got {y!r}"
    return f"expected {len(al)} lines, got {len(bl)}"


def check_lang(gpy, path, python):
    d, name = os.path.split(path)
    kind = oracle_kind(path)
    rc, out, err = run([gpy, name], d)
    if rc == "timeout":
        return "timed out"
    if kind == "file":
        with open(path[:-4] + ".out", encoding="utf-8") as f:
            exp_out, exp_rc = f.read(), 0
    else:
        erc, exp_out, eerr = run([python, name], d)
        if erc == "timeout":
            return "python3 timed out"
        exp_rc = erc
    if rc != exp_rc:
        return f"exit status {rc}, expected {exp_rc}\n{err[-2000:]}"
    if out != exp_out:
        return "stdout differs: " + first_diff(exp_out, out)
    return None


def check_errors(gpy, path, python):
    d, name = os.path.split(path)
    rc, out, err = run([gpy, name], d)
    if rc == "timeout":
        return "timed out"
    erc, eout, eerr = run([python, name], d)
    if rc != erc:
        return f"exit status {rc}, expected {erc}\n{err[-2000:]}"
    if out != eout:
        return "stdout differs: " + first_diff(eout, out)
    if re.search(r"^(SyntaxError|IndentationError)", eerr, re.M):
        # a syntax error's caret line is part of what gpy must match
        exp_err, got_err = eerr, err
    else:
        exp_err, got_err = strip_markers(eerr), strip_markers(err)
    if got_err != exp_err:
        return "stderr differs: " + first_diff(exp_err, got_err)
    return None


def check_hostile(gpy, path, python):
    d, name = os.path.split(path)
    rc, out, err = run([gpy, name], d)
    if rc == "timeout":
        return "hung (timeout)"
    if not isinstance(rc, int) or rc < 0 or rc > 2:
        return f"crashed: exit status {rc}\n{err[-2000:]}"
    if rc == 0:
        return "exited 0: expected an error"
    if not re.search(r"(Error|Exception|gpy:)", err):
        return "no error message on stderr"
    return None


def check_cli(gpy, path, python):
    env = dict(os.environ, GPY=gpy, ROOT=ROOT)
    rc, out, err = run(["bash", path], os.path.dirname(path), env=env)
    if rc != 0:
        return f"exit status {rc}\n{out[-2000:]}{err[-2000:]}"
    return None


# Runs a program under the Numba CUDA simulator. numba.cuda is imported
# first: real Numba only binds `numba.cuda` as an attribute of `numba` once
# the submodule is imported, which gpy (and the seed program) rely on.
SIMULATOR_PRELUDE = ("import sys, runpy, numba.cuda; sys.argv = sys.argv[1:]; "
                     "runpy.run_path(sys.argv[0], run_name='__main__')")


def find_ptxas():
    p = shutil.which("ptxas")
    if p:
        return p
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("GPY_CUDA_HOME"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
            return os.path.join(root, "bin", "ptxas")
    return None


def check_ptx(ptxdir, ptxas, required):
    files = sorted(f for f in os.listdir(ptxdir) if f.endswith(".ptx"))
    if required and not files:
        return "no PTX was produced under GPY_DUMP_PTX (add '# ptx: none' if no kernel compiles)"
    for f in files:
        # PTX made for a real GPU (GPY_DEVICE=cuda) targets that GPU's
        # architecture, which older ones cannot assemble: check it for the
        # listed architectures it can run on, or its own when none is listed
        with open(os.path.join(ptxdir, f), encoding="utf-8", errors="replace") as t:
            text = t.read()
        devrt = "__cudaCDP2" in text  # kernels launching kernels call the device runtime
        m = re.search(r"^\s*\.target\s+sm_(\d+)", text, re.M)
        target = int(m.group(1)) if m else 80
        archs = [a for a in (80, 90) if a >= target] or [target]
        for arch in (f"sm_{a}" for a in archs):
            obj = os.path.join(ptxdir, f"{f}.{arch}.o") if devrt else os.devnull
            rc, out, err = run([ptxas, f"-arch={arch}"] + (["-c"] if devrt else []) + ["-o", obj, f], ptxdir)
            if rc != 0:
                return f"ptxas -arch={arch} rejected {f} (status {rc}):\n{(out + err)[-2000:]}"
            bindir = os.path.dirname(ptxas)
            lib = os.path.join(os.path.dirname(bindir), "lib64")
            nvlink = os.path.join(bindir, "nvlink")
            if devrt and os.access(nvlink, os.X_OK) and os.path.exists(os.path.join(lib, "libcudadevrt.a")):
                # relocatable: it must link with libcudadevrt, as the driver will
                rc, out, err = run([nvlink, f"-arch={arch}", obj, f"-L{lib}", "-lcudadevrt", "-o", os.devnull], ptxdir)
                if rc != 0:
                    return f"nvlink -arch={arch} {f} -lcudadevrt failed (status {rc}):\n{(out + err)[-2000:]}"
    return None


def check_kernels(gpy, path, python):
    ptxas = find_ptxas()
    if not ptxas:
        return "ptxas not found (on PATH, $CUDA_HOME/bin or /usr/local/cuda/bin): the kernels suite needs it"
    d, name = os.path.split(path)
    kind = oracle_kind(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        ptx_required = not re.search(r"^#\s*ptx:\s*none", f.read(), re.M)
    with tempfile.TemporaryDirectory(prefix="gpy-ptx-") as ptxdir:
        env = dict(os.environ, GPY_DUMP_PTX=ptxdir)
        rc, out, err = run([gpy, name], d, env=env)
        if rc == "timeout":
            return "timed out"
        if kind == "file":
            with open(path[:-4] + ".out", encoding="utf-8") as f:
                exp_out, exp_rc = f.read(), 0
        else:
            senv = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
            erc, exp_out, eerr = run([python, "-c", SIMULATOR_PRELUDE, name], d, env=senv, timeout=ORACLE_TIMEOUT)
            if erc == "timeout":
                return "the Numba simulator timed out"
            exp_rc = erc
            if erc != 0 and "No module named 'numba'" in eerr:
                return "numba is not installed (pip install numba): it is the oracle of this suite"
        if rc != exp_rc:
            return f"exit status {rc}, expected {exp_rc}\n{err[-2000:]}"
        if out != exp_out:
            return "stdout differs: " + first_diff(exp_out, out)
        return check_ptx(ptxdir, ptxas, ptx_required)


SUITES = {"lang": check_lang, "errors": check_errors, "hostile": check_hostile, "cli": check_cli,
          "kernels": check_kernels}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    ap.add_argument("--python", default="python3")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("filters", nargs="*", help="run only tests whose path contains one of these")
    a = ap.parse_args()
    gpy = os.path.abspath(a.gpy)
    jobs = []
    for suite, fn in SUITES.items():
        folder = os.path.join(ROOT, "tests", suite)
        ext = ".sh" if suite == "cli" else ".gpy"
        for name in sorted(os.listdir(folder)):
            if name.endswith(ext) and not name.startswith("_"):
                path = os.path.join(folder, name)
                if a.filters and not any(f in path for f in a.filters):
                    continue
                jobs.append((suite, path, fn))
    passed = failed = 0
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [(s, p, ex.submit(fn, gpy, p, a.python)) for s, p, fn in jobs]
        for suite, path, fut in futs:
            try:
                msg = fut.result()
            except Exception as e:  # a runner bug must show, not hide a test
                msg = f"runner error: {e!r}"
            if msg is None:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {suite}/{os.path.basename(path)}: {msg}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
