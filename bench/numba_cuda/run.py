#!/usr/bin/env python3
"""Measures gpy against numba-cuda's own test suite (issue 15).

numba-cuda's tests ship in its wheel (numba_cuda/numba/cuda/tests/). This
script downloads the wheel at run time (pip download, into --cache), never
copies test code into the repository, and runs every test file of
tests/cudapy and tests/doc_examples:

  * under gpy, one process per file (shim/ncrun_driver.gpy with the
    unittest / numpy.testing / numba.cuda.testing shims of shim/ on GPY_PATH);
  * under Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) in a venv under
    --cache with numba-cuda installed: the reference. Its results are cached
    per numba-cuda version (--rerun-sim runs it again).

It prints, and writes to --out (summary.txt, results.json): tests passed
under gpy and under the simulator, the fraction of the simulator's passes
that gpy passes, a per-file table and a histogram of gpy's first error lines.

  python3 bench/numba_cuda/run.py [--gpy build/gpy] [-j 2] [FILTER ...]
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHIM = os.path.join(HERE, 'shim')

# Files not run, each with the reason the issue allows (docs/gpu.md lists them).
SKIPPED = {
    'cudapy/test_multigpu.py': 'needs several GPUs',
    'cudapy/test_ipc.py': 'CUDA IPC between processes',
    'cudapy/test_analysis.py': "Numba compiler internals (numba.cuda.core.analysis, IR passes)",
    'cudapy/test_byteflow.py': "Numba compiler internals (bytecode flow analysis)",
    'cudapy/test_copy_propagate.py': "Numba compiler internals (IR copy propagation)",
    'cudapy/test_ir.py': "Numba compiler internals (numba.cuda.core.ir)",
    'cudapy/test_ir_utils.py': "Numba compiler internals (IR utilities, compiler passes)",
    'cudapy/test_ssa.py': "Numba compiler internals (SSA reconstruction)",
    'cudapy/test_typeinfer.py': "Numba compiler internals (type-inference passes)",
    'cudapy/test_typeconv.py': "Numba compiler internals (typeconv cast graph)",
    'cudapy/test_debuginfo.py': "FileCheck of Numba's own LLVM IR debug info",
    'cudapy/test_debuginfo_types.py': "FileCheck of Numba's own LLVM IR debug info",
}
SUITES = ('cudapy', 'doc_examples')


def fetch(cache, version):
    """The numba-cuda wheel in cache/wheels, unpacked under cache/src-VERSION."""
    wheels = os.path.join(cache, 'wheels')
    os.makedirs(wheels, exist_ok=True)
    spec = 'numba-cuda' + ('==' + version if version else '')
    have = sorted(glob.glob(os.path.join(wheels, 'numba_cuda-*.whl')))
    if version:
        have = [w for w in have if os.path.basename(w).startswith('numba_cuda-%s-' % version)]
    if not have:
        subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', spec, '--no-deps', '--only-binary', ':all:',
                        '-d', wheels], check=True)
        have = sorted(glob.glob(os.path.join(wheels, 'numba_cuda-*.whl')))
    wheel = have[-1]
    ver = os.path.basename(wheel).split('-')[1]
    src = os.path.join(cache, 'src-' + ver)
    if not os.path.isdir(src):
        with zipfile.ZipFile(wheel) as z:
            z.extractall(src + '.tmp')
        os.rename(src + '.tmp', src)
    return wheel, ver, os.path.join(src, 'numba_cuda', 'numba', 'cuda', 'tests')


def gpy_view(cache, ver, tests_dir):
    """cache/view-VERSION/SUITE/NAME.gpy links to the tests' .py files: gpy
    imports .gpy files, and the tests import their helper modules
    (numba.cuda.tests.cudapy.cache_usecases, from .extensions_usecases ...)."""
    view = os.path.join(cache, 'view-' + ver)
    for suite in SUITES:
        os.makedirs(os.path.join(view, suite), exist_ok=True)
        for p in glob.glob(os.path.join(tests_dir, suite, '*.py')):
            link = os.path.join(view, suite, os.path.basename(p)[:-3] + '.gpy')
            if not os.path.lexists(link):
                os.symlink(p, link)
    return view


def ensure_venv(cache, wheel, ver):
    """A venv (system site-packages: numpy, numba) with this numba-cuda installed."""
    venv = os.path.join(cache, 'venv-' + ver)
    py = os.path.join(venv, 'bin', 'python')
    if not os.path.exists(os.path.join(venv, '.ready')):
        subprocess.run([sys.executable, '-m', 'venv', '--system-site-packages', venv], check=True)
        subprocess.run([py, '-m', 'pip', 'install', '-q', wheel, 'pytest', 'filecheck'], check=True)
        open(os.path.join(venv, '.ready'), 'w').close()
    return py


def run_one(argv, env, cwd, out_path, timeout):
    """Runs a driver; returns (lines, problem) where problem names a crash or timeout."""
    if os.path.exists(out_path):
        os.remove(out_path)
    try:
        p = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        rc, err = p.returncode, p.stderr.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired:
        rc, err = None, ''
    lines = []
    if os.path.exists(out_path):
        with open(out_path, encoding='utf-8', errors='replace') as f:
            lines = [ln.rstrip('\n').split('|', 2) for ln in f if ln.count('|') >= 2]
    problem = None
    if not any(ln[0] == 'done' or ln[0] == 'import-error' for ln in lines):
        if rc is None:
            problem = 'Timeout: more than %d s' % timeout
        else:
            tail = [ln for ln in err.strip().splitlines() if ln.strip()]
            problem = 'Crash: exit %d%s' % (rc, (': ' + tail[-1][:200]) if tail else '')
    return lines, problem


def collect(lines, problem):
    """{test: (status, text)}, the file's import error (or None), and problem."""
    tests, imp = {}, None
    rank = {'error': 3, 'fail': 2, 'skip': 1, 'pass': 0}
    for status, name, text in lines:
        if status == 'import-error':
            imp = text
        elif status in rank:
            old = tests.get(name)
            if old is None or rank[status] > rank[old[0]]:
                tests[name] = (status, text)
    return tests, imp, problem


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--gpy', default=os.path.join(ROOT, 'build', 'gpy'))
    ap.add_argument('--cache', default='/tmp/gpy-numba-cuda', help='wheel, unpacked tests, venv, simulator results')
    ap.add_argument('--version', default=None, help='numba-cuda version (default: the one cached, else the latest)')
    ap.add_argument('--out', default=None, help='results folder (default CACHE/results)')
    ap.add_argument('-j', type=int, default=2)
    ap.add_argument('--timeout', type=int, default=120, help='seconds per file under gpy')
    ap.add_argument('--sim-timeout', type=int, default=900, help='seconds per file under the simulator')
    ap.add_argument('--no-sim', action='store_true', help='no simulator run (cached results are still used)')
    ap.add_argument('--rerun-sim', action='store_true')
    ap.add_argument('--top', type=int, default=30, help='causes shown in the histogram')
    ap.add_argument('filters', nargs='*', help='substrings of test file paths')
    args = ap.parse_args()

    cache = os.path.abspath(args.cache)
    out_dir = os.path.abspath(args.out or os.path.join(cache, 'results'))
    os.makedirs(out_dir, exist_ok=True)
    work = os.path.join(cache, 'work')  # a clean cwd: nothing there shadows a module
    os.makedirs(work, exist_ok=True)
    wheel, ver, tests_dir = fetch(cache, args.version)
    gpy = os.path.abspath(args.gpy)
    view = gpy_view(cache, ver, tests_dir)

    files = []
    for suite in SUITES:
        for p in sorted(glob.glob(os.path.join(tests_dir, suite, 'test_*.py'))):
            rel = suite + '/' + os.path.basename(p)
            if rel in SKIPPED:
                continue
            if args.filters and not any(f in rel for f in args.filters):
                continue
            files.append((rel, p))

    sim_dir = os.path.join(cache, 'sim-' + ver)
    os.makedirs(sim_dir, exist_ok=True)
    sim_py = None
    if not args.no_sim:
        sim_py = ensure_venv(cache, wheel, ver)
    gpy_env = dict(os.environ, GPY_PATH=SHIM, NCRUN_TESTS_VIEW=view)
    gpy_env.pop('NUMBA_ENABLE_CUDASIM', None)
    sim_env = dict(os.environ, NUMBA_ENABLE_CUDASIM='1')
    sim_env.pop('PYTHONPATH', None)

    def modname(rel):
        return 'numba.cuda.tests.' + rel[:-3].replace('/', '.')

    def gpy_job(rel, path):
        tmp = os.path.join(work, 'gpy-' + rel.replace('/', '-') + '.txt')
        argv = [gpy, os.path.join(SHIM, 'ncrun_driver.gpy'), path, modname(rel), tmp]
        return collect(*run_one(argv, gpy_env, work, tmp, args.timeout))

    def sim_job(rel):
        cached = os.path.join(sim_dir, rel.replace('/', '-') + '.json')
        if os.path.exists(cached) and not args.rerun_sim:
            with open(cached) as f:
                return tuple(json.load(f))
        if sim_py is None:
            return None
        tmp = os.path.join(work, 'sim-' + rel.replace('/', '-') + '.txt')
        argv = [sim_py, os.path.join(HERE, 'sim_driver.py'), modname(rel), tmp]
        res = collect(*run_one(argv, sim_env, work, tmp, args.sim_timeout))
        with open(cached, 'w') as f:
            json.dump(res, f)
        return res

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as ex:
        gpy_f = {rel: ex.submit(gpy_job, rel, p) for rel, p in files}
        sim_f = {rel: ex.submit(sim_job, rel) for rel, _ in files}
        results = {}
        for rel, _ in files:
            results[rel] = (gpy_f[rel].result(), sim_f[rel].result())

    report(results, ver, out_dir, args.top)


def report(results, ver, out_dir, top):
    per_test = {}
    rows = []
    causes = collections.Counter()
    sim_causes = collections.Counter()  # among the tests the simulator passes
    tot = collections.Counter()
    for rel in sorted(results):
        (g_tests, g_imp, g_prob), sim = results[rel]
        s_tests = sim[0] if sim else {}
        names = sorted(set(g_tests) | set(s_tests))
        c = collections.Counter()
        for n in names:
            g = g_tests.get(n)
            if g is None:  # gpy never got to it: the file's import error, a crash or a timeout
                g = ('error', g_imp or g_prob or 'not run')
            s = s_tests.get(n, ('absent', ''))
            per_test[rel + '::' + n] = {'gpy': g[0], 'gpy_error': g[1], 'sim': s[0], 'sim_error': s[1]}
            c['tests'] += 1
            c['gpy_' + g[0]] += 1
            c['sim_' + s[0]] += 1
            if g[0] == 'pass' and s[0] == 'pass':
                c['both'] += 1
            if g[0] in ('fail', 'error'):
                causes[g[1][:160]] += 1
            if s[0] == 'pass' and g[0] != 'pass':
                sim_causes[('skipped: ' if g[0] == 'skip' else '') + g[1][:160]] += 1
        if not names and (g_imp or g_prob):
            causes[(g_imp or g_prob)[:160]] += 0
        tot.update(c)
        rows.append((rel, c, g_imp or g_prob or ''))

    lines = ['numba-cuda %s tests: gpy vs Numba CUDA simulator' % ver, '']
    lines.append('%-44s %6s %6s %6s %6s  %s' % ('file', 'tests', 'sim', 'gpy', 'both', 'gpy file-level problem'))
    for rel, c, prob in rows:
        lines.append('%-44s %6d %6d %6d %6d  %s' % (rel, c['tests'], c['sim_pass'], c['gpy_pass'], c['both'], prob[:90]))
    sim_pass = tot['sim_pass']
    frac = (100.0 * tot['both'] / sim_pass) if sim_pass else 0.0
    lines += ['',
              'test methods: %d' % tot['tests'],
              'passed under gpy: %d (fail %d, error %d, skip %d)' % (tot['gpy_pass'], tot['gpy_fail'],
                                                                    tot['gpy_error'], tot['gpy_skip']),
              'passed under the simulator: %d (fail %d, error %d, skip %d)' % (sim_pass, tot['sim_fail'],
                                                                              tot['sim_error'], tot['sim_skip']),
              'of the simulator\'s passes, gpy passes: %d (%.1f%%)' % (tot['both'], frac),
              '', 'top causes of gpy failures (first error line, tests affected):']
    for text, n in causes.most_common(top):
        lines.append('%6d  %s' % (n, text))
    lines += ['', 'of those, among the tests the simulator passes:']
    for text, n in sim_causes.most_common(top):
        lines.append('%6d  %s' % (n, text))
    lines += ['', 'skipped files:'] + ['  %s: %s' % kv for kv in sorted(SKIPPED.items())]
    text = '\n'.join(lines) + '\n'
    with open(os.path.join(out_dir, 'summary.txt'), 'w') as f:
        f.write(text)
    with open(os.path.join(out_dir, 'results.json'), 'w') as f:
        json.dump({'numba_cuda': ver, 'totals': dict(tot), 'tests': per_test,
                   'causes': causes.most_common(), 'causes_among_sim_passes': sim_causes.most_common()}, f, indent=1, sort_keys=True)
    print(text, end='')
    print('written: %s/summary.txt, results.json' % out_dir)


if __name__ == '__main__':
    main()
