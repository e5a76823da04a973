#!/usr/bin/env bash
# Builds gpy and runs every test suite. The last line of output is
# 'N passed, N failed'; the exit status is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 tests/run_tests.py --gpy build/gpy "$@"
