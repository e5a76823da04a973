#!/usr/bin/env bash
# Builds the test driver tests/gpu/fake_libcuda.c into DIR and prints the
# path of the library, for tests that run gpy on it:
#   lib=$(bash "$ROOT/tests/gpu/build-fake.sh" "$tmp") || exit 1
#   GPY_LIBCUDA=$lib FAKE_CUDA_LOG=$tmp/log GPY_DEVICE=cuda "$GPY" prog.gpy
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
${CC:-cc} -std=c17 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -shared -fPIC -o "$1/fake_libcuda.so" \
  "$ROOT/tests/gpu/fake_libcuda.c" -lpthread
echo "$1/fake_libcuda.so"
