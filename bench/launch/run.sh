#!/usr/bin/env bash
# Builds the test driver and launch_bench, runs it (see launch_bench.c).
#   bash bench/launch/run.sh          against tests/gpu/fake_libcuda.so
#   REAL=1 bash bench/launch/run.sh   against the system's libcuda.so.1
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
flags="-std=c17 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE"
$CC $flags -o "$tmp/launch_bench" "$ROOT/bench/launch/launch_bench.c" "$ROOT/gpu/cuda_driver.c" \
  "$ROOT/gpu/cuda_module.c" "$ROOT/gpu/cuda_params.c" -ldl -lpthread
if [ "${REAL:-0}" = 1 ]; then
  unset GPY_LIBCUDA
  "$tmp/launch_bench"
else
  $CC $flags -shared -fPIC -o "$tmp/fake_libcuda.so" "$ROOT/tests/gpu/fake_libcuda.c" -lpthread
  GPY_LIBCUDA="$tmp/fake_libcuda.so" FAKE_CUDA_NO_PROBE=1 "$tmp/launch_bench"
fi
