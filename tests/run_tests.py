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

Prints one line per failure and ends with 'N passed, N failed'.
"""
import argparse
import concurrent.futures as cf
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 20

MARKER_LINE = re.compile(r"^\s*[~^]+\s*$")


def run(cmd, cwd, stdin=None, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True,
                           timeout=TIMEOUT, env=env)
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


SUITES = {"lang": check_lang, "errors": check_errors, "hostile": check_hostile, "cli": check_cli}


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
