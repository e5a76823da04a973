#!/usr/bin/env bash
# The CUDA driver layer (gpu/cuda_driver.c, gpu/cuda_module.c) alone, against
# the test driver tests/gpu/fake_libcuda.c, which checks every call against
# the driver API's contracts and records each launch's parameter bytes.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CC=${CC:-cc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
flags="-std=c17 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE"
# a check that cannot run here (a missing tool) is skipped, except where CI
# asks for every check (GPY_TEST_STRICT=1): there it fails
skip() {
  if [ "${GPY_TEST_STRICT:-0}" = 1 ]; then echo "FAIL (GPY_TEST_STRICT=1) cannot check: $*"; exit 1; fi
  echo "SKIP: $*"
}

lib=$(bash "$ROOT/tests/gpu/build-fake.sh" "$tmp") || { echo "FAIL building tests/gpu/fake_libcuda.c"; exit 1; }
$CC $flags -o "$tmp/cuda_driver_test" "$ROOT/tests/gpu/cuda_driver_test.c" \
  "$ROOT/gpu/cuda_driver.c" "$ROOT/gpu/cuda_module.c" "$ROOT/gpu/cuda_params.c" -ldl -lpthread ||
  { echo "FAIL building tests/gpu/cuda_driver_test.c"; exit 1; }

# PTX from gpy's own compiler: the fake must read it
mkdir -p "$tmp/ptx"
if [ -n "${GPY:-}" ]; then
  GPY_DEVICE=cpu GPY_DUMP_PTX="$tmp/ptx" timeout 120 "$GPY" "$ROOT/examples/vector_add.gpy" >"$tmp/vadd.out" 2>&1 ||
    { echo "FAIL gpy examples/vector_add.gpy:"; cat "$tmp/vadd.out"; exit 1; }
  ls "$tmp"/ptx/*.ptx >/dev/null 2>&1 || { echo "FAIL gpy wrote no PTX file under GPY_DUMP_PTX"; exit 1; }
else
  skip "GPY is not set: PTX from gpy's compiler is not loaded"
fi
out=$(GPY_LIBCUDA="$lib" FAKE_CUDA_LOG="$tmp/log" "$tmp/cuda_driver_test" "$ROOT/tests/gpu/vadd.ptx" \
  $(ls "$tmp"/ptx/*.ptx 2>/dev/null) 2>&1)
status=$?
if [ $status -ne 0 ] || ! grep -q '^cuda_driver_test: [0-9]* checks passed$' <<<"$out"; then
  echo "FAIL cuda_driver_test (status $status):"; echo "$out"; exit 1
fi

# FAKE_CUDA_LOG: a line per launch (each parameter's bytes in hex) and per violation
grep -q '^launch vadd grid=4,1,1 block=256,1,1 shared=0 params=[0-9a-f]\{16\},[0-9a-f]\{16\},[0-9a-f]\{16\},e803000000000000$' "$tmp/log" ||
  { echo "FAIL FAKE_CUDA_LOG launch line"; head -5 "$tmp/log"; exit 1; }
grep -q '^violation cuMemcpyHtoD_v2: destination: 4001 bytes at offset 0 overrun' "$tmp/log" ||
  { echo "FAIL FAKE_CUDA_LOG violation line"; exit 1; }

# the toolkit's stub libcuda.so exports the real driver's symbols: every
# entry point gpy resolves must be there (cuInit then reports the stub)
stub="${GPY_CUDA_HOME:-${CUDA_HOME:-/usr/local/cuda}}/lib64/stubs/libcuda.so"
if [ -f "$stub" ]; then
  out=$(GPY_LIBCUDA="$stub" "$tmp/cuda_driver_test" "$ROOT/tests/gpu/vadd.ptx" 2>&1)
  grep -q 'CUDA_ERROR_STUB_LIBRARY: CUDA driver is a stub library' <<<"$out" ||
    { echo "FAIL resolving the driver's entry points in $stub:"; echo "$out"; exit 1; }
else
  skip "no CUDA toolkit stub driver $stub: the real driver's entry points are not checked"
fi

# strict mode turns a contract violation into an abort with the message
ulimit -c 0
{ GPY_LIBCUDA="$lib" FAKE_CUDA_STRICT=1 "$tmp/cuda_driver_test" "$ROOT/tests/gpu/vadd.ptx" \
  >/dev/null 2>"$tmp/strict_err"; } 2>/dev/null
status=$?
if [ $status -eq 0 ] || ! grep -q 'fake_libcuda: contract violation: cuMemcpyHtoD_v2: .*overrun' "$tmp/strict_err"; then
  echo "FAIL FAKE_CUDA_STRICT=1 (status $status):"; cat "$tmp/strict_err"; exit 1
fi
exit 0
