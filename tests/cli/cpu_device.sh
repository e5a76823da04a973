#!/usr/bin/env bash
# The CPU device runtime (gpu/cpu_device.c, gpu/fiber.c) alone: hand-written
# C kernels check that every thread runs once, barriers, shared memory,
# worker counts, invalid launches and out-of-bounds faults
# (tests/gpu/cpu_device_test.c).
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CC=${CC:-cc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
flags="-std=c17 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -I$ROOT/vm -I$ROOT/include"
$CC $flags -o "$tmp/cpu_device_test" "$ROOT/tests/gpu/cpu_device_test.c" "$ROOT/gpu/cpu_device.c" \
  "$ROOT/gpu/fiber.c" "$ROOT/gpu/guarded_mem.c" || { echo "FAIL building tests/gpu/cpu_device_test.c"; exit 1; }
out=$(timeout 120 "$tmp/cpu_device_test" 2>&1)
status=$?
if [ $status -ne 0 ] || ! grep -q '^cpu_device_test: [0-9]* checks passed$' <<<"$out"; then
  echo "FAIL cpu_device_test (status $status):"; echo "$out" | tail -40; exit 1
fi
exit 0
