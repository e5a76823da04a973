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
  hostile  malformed and hostile input: stdout, the exit status and the last
           line of stderr (the exception, e.g. 'RecursionError: maximum
           recursion depth exceeded') must equal CPython's; gpy must never
           crash (signal), hang (timeout), exit 0 or raise SystemError.
           CPython runs under a 4 GiB address-space limit, so that huge
           allocations raise MemoryError there too. Where gpy differs on
           purpose, a header line '# differs: <reason>' lets the exception
           line differ (gpy must still exit 1 with an exception line); where
           CPython itself crashes, '# oracle: file' as the first line takes
           the expected stdout from NAME.out, checked by hand.
  cli      shell scripts exercising the command line; they exit 0 on success.
           A check that cannot run here (a missing tool) prints 'SKIP: why'
           and, under GPY_TEST_STRICT=1 (set by CI), fails instead.
  kernels  CUDA kernels (@cuda.jit) run on the CPU device: stdout and exit
           status must equal those of the Numba CUDA simulator running the
           same program (NUMBA_ENABLE_CUDASIM=1 python3 prog.gpy); programs
           whose first line is '# oracle: file' compare against NAME.out,
           checked by hand (for what the simulator lacks). gpy runs with
           GPY_DUMP_PTX=<tmpdir>: every PTX file a program's kernels produce
           must assemble with `ptxas -arch=sm_80` and `-arch=sm_90`, and a
           program must produce at least one unless a line '# ptx: none'
           says it compiles no kernel. A missing ptxas fails the suite.

In lang and kernels, an oracle that exits non-zero makes the test expect the
same exit status and the same last line of stderr (the same exception), so a
broken oracle cannot pass a test that gpy fails too. Any test whose gpy run
prints an AddressSanitizer or UBSan report fails (a -DGPY_SANITIZE=ON build).

Prints one line per failure (and per skipped check) and ends with
'N passed, N failed'. GPY_TEST_STRICT=1 turns every skip into a failure.
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
TIMEOUT = 20  # seconds per gpy run; --timeout changes it (sanitizer builds are slower)
# the Numba simulator is an oracle, not the product: it polls a Python thread
# per CUDA thread (about 1 s per launch), so it gets more time on 2 busy cores
ORACLE_TIMEOUT = 90

MARKER_LINE = re.compile(r"^\s*[~^]+\s*$")
# the last line of a traceback: an exception class (with its module where
# that is not builtins or __main__), then its message
EXCEPTION_LINE = re.compile(r"^([a-z_]\w*\.)*[A-Z]\w*(: .*)?$")
# the first line of an AddressSanitizer or UBSan report
SANITIZER_REPORT = re.compile(r"^(==\d+==ERROR: \w+Sanitizer.*|.*: runtime error: .*|\w+Sanitizer:DEADLYSIGNAL)$", re.M)
# CI sets it: a check that cannot run here (a missing tool) fails instead of being skipped
STRICT = os.environ.get("GPY_TEST_STRICT") == "1"
# CPython as the hostile suite's oracle: a huge allocation must raise
# MemoryError at once rather than swap for minutes, as it does under gpy
ORACLE_MEMORY_KB = 4 << 20


class Skip(str):
    """What a check returns when it cannot run here: the reason."""


class SanitizerReport(Exception):
    """A gpy run printed an AddressSanitizer/UBSan report (its first line)."""


def run(cmd, cwd, stdin=None, env=None, timeout=None):
    timeout = timeout or TIMEOUT
    try:
        p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def run_gpy(cmd, cwd, env=None):
    rc, out, err = run(cmd, cwd, env=env)
    m = SANITIZER_REPORT.search(err)
    if m:
        raise SanitizerReport(m.group(0))
    return rc, out, err


def last_line(text):
    lines = text.rstrip("\n").split("\n")
    return lines[-1]


def oracle_failed(exp_rc, exp_err, rc, err):
    """A failing oracle (non-zero exit) passes only a gpy run failing the same
    way: the same status and the same exception line. None when they agree."""
    if not isinstance(exp_rc, int) or exp_rc < 0:
        return f"the oracle crashed (status {exp_rc}):\n{exp_err[-2000:]}"
    if exp_rc != 0 and last_line(err) != last_line(exp_err):
        return (f"the oracle exited {exp_rc} with {last_line(exp_err)!r}; gpy's last line of stderr "
                f"is {last_line(err)!r}")
    return None


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
    rc, out, err = run_gpy([gpy, name], d)
    if rc == "timeout":
        return "timed out"
    if kind == "file":
        with open(path[:-4] + ".out", encoding="utf-8") as f:
            exp_out, exp_rc, eerr = f.read(), 0, ""
    else:
        erc, exp_out, eerr = run([python, name], d)
        if erc == "timeout":
            return "python3 timed out"
        exp_rc = erc
    if rc != exp_rc:
        return f"exit status {rc}, expected {exp_rc}\n{err[-2000:]}"
    if out != exp_out:
        return "stdout differs: " + first_diff(exp_out, out)
    return oracle_failed(exp_rc, eerr, rc, err)


def check_errors(gpy, path, python):
    d, name = os.path.split(path)
    rc, out, err = run_gpy([gpy, name], d)
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


def hostile_difference(path):
    """The reason in a '# differs: <reason>' line of the leading comments."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith("#"):
                break
            m = re.match(r"#\s*differs:\s*(\S.*)", line)
            if m:
                return m.group(1)
    return None


def check_hostile(gpy, path, python):
    d, name = os.path.split(path)
    rc, out, err = run_gpy([gpy, name], d)
    if rc == "timeout":
        return "hung (timeout)"
    if not isinstance(rc, int) or rc < 0 or rc > 2:
        return f"crashed: exit status {rc}\n{err[-2000:]}"
    if rc == 0:
        return "exited 0: expected an error"
    got = last_line(err)
    if got.startswith("SystemError"):
        return f"raised {got!r}: SystemError is an interpreter bug, never an answer"
    if not EXCEPTION_LINE.match(got):
        return f"the last line of stderr is not an exception: {got!r}\n{err[-2000:]}"
    differs = hostile_difference(path)
    if oracle_kind(path) == "file":
        if not differs:
            return "'# oracle: file' needs a '# differs: <reason>' line (there is no CPython exception to compare)"
        with open(path[:-4] + ".out", encoding="utf-8") as f:
            exp_out, exp_rc, exp_line = f.read(), 1, None
    else:
        limited = ["sh", "-c", f'ulimit -v {ORACLE_MEMORY_KB} && exec "$0" "$@"', python, name]
        # OpenBLAS reserves buffers per thread: on many cores, numpy's import alone would pass the limit
        exp_rc, exp_out, eerr = run(limited, d, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
        if not isinstance(exp_rc, int) or exp_rc < 0:
            return (f"CPython crashed or hung (status {exp_rc}): use '# oracle: file' with "
                    f"NAME.out checked by hand\n{eerr[-2000:]}")
        exp_line = last_line(eerr)
    if differs:
        # a documented difference: only the exception may differ, and gpy must fail
        exp_rc, exp_line = 1, None
    if rc != exp_rc:
        return f"exit status {rc}, expected {exp_rc}\n{err[-2000:]}"
    if out != exp_out:
        return "stdout differs: " + first_diff(exp_out, out)
    if exp_line is not None and got != exp_line:
        return f"exception differs: expected {exp_line!r}, got {got!r}"
    return None


def check_cli(gpy, path, python):
    env = dict(os.environ, GPY=gpy, ROOT=ROOT)
    rc, out, err = run(["bash", path], os.path.dirname(path), env=env)
    if rc != 0:
        return f"exit status {rc}\n{out[-2000:]}{err[-2000:]}"
    skips = [l[len("SKIP:"):].strip() for l in out.split("\n") if l.startswith("SKIP:")]
    return Skip("; ".join(skips)) if skips else None


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
    skip = None
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
            if devrt and not (os.access(nvlink, os.X_OK) and os.path.exists(os.path.join(lib, "libcudadevrt.a"))):
                skip = Skip(f"{f} calls the device runtime; linking it needs {nvlink} and {lib}/libcudadevrt.a")
            elif devrt:
                # relocatable: it must link with libcudadevrt, as the driver will
                rc, out, err = run([nvlink, f"-arch={arch}", obj, f"-L{lib}", "-lcudadevrt", "-o", os.devnull], ptxdir)
                if rc != 0:
                    return f"nvlink -arch={arch} {f} -lcudadevrt failed (status {rc}):\n{(out + err)[-2000:]}"
    return skip


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
        rc, out, err = run_gpy([gpy, name], d, env=env)
        if rc == "timeout":
            return "timed out"
        if kind == "file":
            with open(path[:-4] + ".out", encoding="utf-8") as f:
                exp_out, exp_rc, eerr = f.read(), 0, ""
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
        return oracle_failed(exp_rc, eerr, rc, err) or check_ptx(ptxdir, ptxas, ptx_required)


SUITES = {"lang": check_lang, "errors": check_errors, "hostile": check_hostile, "cli": check_cli,
          "kernels": check_kernels}


def main():
    global TIMEOUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpy", default=os.path.join(ROOT, "build", "gpy"))
    ap.add_argument("--python", default="python3")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per gpy run (default %(default)s)")
    ap.add_argument("--suites", default=",".join(SUITES), help="comma-separated suites to run (default: all)")
    ap.add_argument("--exclude", action="append", default=[], metavar="SUBSTRING",
                    help="leave out tests whose path contains it (repeatable)")
    ap.add_argument("filters", nargs="*", help="run only tests whose path contains one of these")
    a = ap.parse_args()
    TIMEOUT = a.timeout
    gpy = os.path.abspath(a.gpy)
    jobs = []
    suites = a.suites.split(",")
    unknown = [x for x in suites if x not in SUITES]
    if unknown:
        ap.error(f"unknown suite {unknown[0]!r} (suites: {', '.join(SUITES)})")
    for suite, fn in SUITES.items():
        if suite not in suites:
            continue
        folder = os.path.join(ROOT, "tests", suite)
        ext = ".sh" if suite == "cli" else ".gpy"
        for name in sorted(os.listdir(folder)):
            if name.endswith(ext) and not name.startswith("_"):
                path = os.path.join(folder, name)
                if a.filters and not any(f in path for f in a.filters):
                    continue
                if any(x in path for x in a.exclude):
                    continue
                jobs.append((suite, path, fn))
    passed = failed = skipped = 0
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [(s, p, ex.submit(fn, gpy, p, a.python)) for s, p, fn in jobs]
        for suite, path, fut in futs:
            try:
                msg = fut.result()
            except SanitizerReport as e:
                msg = f"sanitizer report: {e}"
            except Exception as e:  # a runner bug must show, not hide a test
                msg = f"runner error: {e!r}"
            if isinstance(msg, Skip) and not STRICT:
                skipped += 1
                print(f"SKIP {suite}/{os.path.basename(path)}: {msg}")
            elif isinstance(msg, Skip):
                failed += 1
                print(f"FAIL {suite}/{os.path.basename(path)}: skipped under GPY_TEST_STRICT=1: {msg}")
            elif msg is None:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {suite}/{os.path.basename(path)}: {msg}")
    if skipped:
        print(f"{skipped} skipped (a missing tool; GPY_TEST_STRICT=1 makes a skip fail)")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
