#!/usr/bin/env bash
# Builds gpy and runs every test suite: the Release build (tests/run_tests.py),
# then the sanitizer build (scripts/test-sanitize.sh), then the embedding
# tests against an installed prefix (tests/embed/run.sh), then a short,
# repeatable fuzz run (scripts/fuzz.sh, 30 s per target). The last line of
# output is 'N passed, N failed' over all runs; the exit status is non-zero
# on any failure. Arguments are test filters for the Release run, as for
# tests/run_tests.py (the sanitizer run always runs its whole set).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# the oracles, pinned: the suites expect their output (never gpy dependencies).
# CPython 3.11 for host programs and error messages; numpy for the arrays
# module; the Numba CUDA simulator for the kernels suite (tests/kernels).
NUMPY_VERSION=2.4.6
NUMBA_VERSION=0.68.1
python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
  { echo "the test oracle is CPython 3.11; python3 is $(python3 --version 2>&1)"; exit 1; }
have=$(python3 -c 'import numpy, numba; print(numpy.__version__, numba.__version__)' 2>/dev/null || true)
if [ "$have" != "$NUMPY_VERSION $NUMBA_VERSION" ]; then
  python3 -m pip install -q "numpy==$NUMPY_VERSION" "numba==$NUMBA_VERSION"
fi

# the Jupyter kernel's test drives it with jupyter_client (a test-only peer,
# in a venv of its own; tests/cli/jupyter_kernel.sh): installed here, before
# the suite, so that the test's time limit does not include the download
GPY_JUPYTER_VENV=${GPY_JUPYTER_VENV:-/tmp/gpy_jupyter_venv}
if ! "$GPY_JUPYTER_VENV/bin/python" -c 'import jupyter_client' 2>/dev/null; then
  python3 -m venv "$GPY_JUPYTER_VENV" && "$GPY_JUPYTER_VENV/bin/pip" install -q "jupyter_client==8.6.3"
fi
export GPY_JUPYTER_VENV

# CI runs every check: one that cannot run here (a missing tool) fails
export GPY_TEST_STRICT=1
log=$(mktemp); trap 'rm -f "$log"' EXIT
status=0
python3 tests/run_tests.py --gpy build/gpy "$@" | tee "$log" || status=1
bash scripts/test-sanitize.sh | tee -a "$log" || status=1
# the embedding tests against an installed prefix (reuses build/ and build-san/)
bash tests/embed/run.sh build build-san | tee -a "$log" || status=1
GPY_FUZZ_SEED=1 bash scripts/fuzz.sh 30 | tee -a "$log" || status=1
# one summary over the runs, each of which ended with its own
awk '/^[0-9]+ passed, [0-9]+ failed$/ { p += $1; f += $3 } END { print p " passed, " f " failed" }' "$log"
exit $status
