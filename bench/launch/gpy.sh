#!/usr/bin/env bash
# Host-side cost of a cached launch with 3 array arguments from a gpy
# program (launch_gpy.gpy) against the test driver, minus the test driver's
# own cuLaunchKernel cost (measured by launch_bench.c in the same run).
#   GPY=build/gpy bash bench/launch/gpy.sh
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPY=${GPY:-$ROOT/build/gpy}
CC=${CC:-cc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
flags="-std=c17 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE"
lib=$(bash "$ROOT/tests/gpu/build-fake.sh" "$tmp")
$CC $flags -o "$tmp/launch_bench" "$ROOT/bench/launch/launch_bench.c" "$ROOT/gpu/cuda_driver.c" \
  "$ROOT/gpu/cuda_module.c" "$ROOT/gpu/cuda_params.c" -ldl -lpthread
export GPY_LIBCUDA="$lib" FAKE_CUDA_NO_PROBE=1
drv=$("$tmp/launch_bench" | sed -n 's/^cuLaunchKernel called directly: *\([0-9.]*\) ns.*/\1/p')
out=$(GPY_DEVICE=cuda "$GPY" "$ROOT/bench/launch/launch_gpy.gpy")
echo "$out"
launch=$(sed -n 's/^launch ns \([0-9.]*\)$/\1/p' <<<"$out")
echo "test driver's cuLaunchKernel: $drv ns"
python3 -c "import sys; print('gpy host-side cost of a cached launch (3 arrays): %.0f ns' % (float(sys.argv[1]) - float(sys.argv[2])))" "$launch" "$drv"
