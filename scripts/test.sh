#!/usr/bin/env bash
# Builds gpy and runs every test suite. The last line of output is
# 'N passed, N failed'; the exit status is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# numpy is the test oracle for the arrays module (never a dependency of gpy)
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install -q numpy
# the Numba CUDA simulator is the oracle of the kernels suite (tests/kernels)
python3 -c 'import numba' 2>/dev/null || python3 -m pip install -q numba
python3 tests/run_tests.py --gpy build/gpy "$@"
