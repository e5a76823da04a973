#!/usr/bin/env bash
# Runs gpy's tests against a real NVIDIA driver and GPU.
#
#   bash tests/gpu/run-real-gpu.sh [--gpy PATH] [--no-suite] [-- run_tests.py args...]
#
# 1. tests/gpu/cuda_driver_test.c against the real libcuda.so.1
#    (GPY_CUDA_TEST_REAL=1: the checks that hold on hardware, including
#    kernels computing on the GPU and a real illegal-address error);
# 2. the whole test suite (tests/run_tests.py) with GPY_DEVICE=cuda, so every
#    kernel the suite launches runs on the GPU, and with no GPY_LIBCUDA, so
#    the driver is the system's (tests/cli/cuda_driver.sh still uses the
#    test driver it builds itself: it checks contracts a GPU cannot report).
#
# Builds gpy in build-gpu/ (Release) unless --gpy names a binary. Needs a
# C compiler, cmake, LLVM 19 (for the build), python3, and the NVIDIA driver
# (libcuda.so.1). Exits non-zero when anything fails.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPY_BIN=""
RUN_SUITE=1
while [ $# -gt 0 ]; do
  case "$1" in
    --gpy) GPY_BIN=$2; shift 2 ;;
    --no-suite) RUN_SUITE=0; shift ;;
    --) shift; break ;;
    *) echo "usage: $0 [--gpy PATH] [--no-suite] [-- run_tests.py args...]" >&2; exit 2 ;;
  esac
done
unset GPY_LIBCUDA FAKE_CUDA_STRICT FAKE_CUDA_DEVICES
CC=${CC:-cc}
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi

echo "== cuda_driver_test (real driver)"
if $CC -std=c17 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o "$tmp/cuda_driver_test" \
     "$ROOT/tests/gpu/cuda_driver_test.c" "$ROOT/gpu/cuda_driver.c" "$ROOT/gpu/cuda_module.c" "$ROOT/gpu/cuda_params.c" -ldl -lpthread; then
  GPY_CUDA_TEST_REAL=1 "$tmp/cuda_driver_test" "$ROOT/tests/gpu/vadd.ptx" || fail=1
else
  echo "FAIL building cuda_driver_test"; fail=1
fi

if [ $RUN_SUITE -eq 1 ]; then
  if [ -z "$GPY_BIN" ]; then
    echo "== building gpy in build-gpu/"
    cmake -S "$ROOT" -B "$ROOT/build-gpu" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
      cmake --build "$ROOT/build-gpu" -j"$(nproc)" >/dev/null || { echo "FAIL building gpy"; exit 1; }
    GPY_BIN="$ROOT/build-gpu/gpy"
  fi
  echo "== test suite on the GPU (GPY_DEVICE=cuda)"
  GPY_DEVICE=cuda python3 "$ROOT/tests/run_tests.py" --gpy "$GPY_BIN" "$@" || fail=1
fi
exit $fail
