#!/usr/bin/env bash
# The command line is the only reader of the environment (repl/env_config.c):
# each GPY_* variable reaches the VM through its config, invalid text is
# refused before anything runs, and gpy --help lists every variable.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GPY=${GPY:-$ROOT/build/gpy}
GPY=$(cd "$(dirname "$GPY")" && pwd)/$(basename "$GPY")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }

# GPY_DEVICE: refused with today's wording, status 2, the program never runs
out=$(GPY_DEVICE=tpu "$GPY" -c 'print("ran")' 2>"$tmp/err"); rc=$?
[ $rc -eq 2 ] || bad "GPY_DEVICE=tpu: exit status $rc, want 2"
[ -z "$out" ] || bad "GPY_DEVICE=tpu: the program ran: $out"
grep -qx "gpy: GPY_DEVICE must be 'cpu' or 'cuda', not 'tpu'" "$tmp/err" || bad "GPY_DEVICE=tpu: stderr $(cat "$tmp/err")"
out=$(GPY_DEVICE=gpu GPY_LIBCUDA=/nonexistent/libcuda.so.1 "$GPY" -c 'from numba import cuda; print(cuda.is_available())' 2>&1)
[ "$out" = False ] || bad "GPY_DEVICE=gpu (an alias of cuda) without a driver: got [$out]"
out=$(GPY_DEVICE= "$GPY" -c 'print(6 * 7)' 2>&1)
[ "$out" = 42 ] || bad "GPY_DEVICE empty means auto: got [$out]"

# GPY_CPU_THREADS: the CPU device's worker count; unusable text keeps the default
out=$(GPY_DEVICE=cpu GPY_CPU_THREADS=3 "$GPY" -c 'from numba import cuda; cuda.detect()' 2>&1)
grep -q "gpy CPU device (3 worker threads)" <<<"$out" || bad "GPY_CPU_THREADS=3: got [$out]"
out=$(GPY_DEVICE=cpu GPY_CPU_THREADS=zero "$GPY" -c 'from numba import cuda; cuda.detect()' 2>&1)
grep -q "gpy CPU device ([0-9]* worker threads)" <<<"$out" || bad "GPY_CPU_THREADS=zero: got [$out]"

# GPY_LIBCUDA: the driver named in the message, marked as coming from the variable
out=$(GPY_DEVICE=cuda GPY_LIBCUDA=/nonexistent/libcuda.so.1 "$GPY" --version 2>&1)
grep -q "device: none: GPY_DEVICE=cuda but /nonexistent/libcuda.so.1 not found: .*(from GPY_LIBCUDA)" <<<"$out" ||
  bad "--version with GPY_LIBCUDA: got [$out]"

# GPY_PATH: searched by import
mkdir -p "$tmp/lib"
echo 'VALUE = 17' >"$tmp/lib/envmod.gpy"
out=$(cd "$tmp" && GPY_PATH="$tmp/nowhere:$tmp/lib" "$GPY" -c 'import envmod; print(envmod.VALUE)' 2>&1)
[ "$out" = 17 ] || bad "GPY_PATH: got [$out]"

# --help names every variable the CLI reads
help=$("$GPY" --help)
for v in GPY_PATH GPY_DEVICE GPY_CPU_THREADS GPY_CPU_FIBER_STACK GPY_CPU_REGIONS GPY_CACHE_DIR GPY_CACHE_STATS \
         GPY_CUDA_HOME CUDA_HOME GPY_CUDA_ARCH GPY_LIBCUDA GPY_DUMP_PTX GPY_JIT_MODULE GPY_GC_STRESS XDG_CACHE_HOME; do
  grep -q "$v" <<<"$help" || bad "gpy --help does not mention $v"
done

# and the library itself reads none of them
hits=$(grep -rn 'getenv *(' "$ROOT/vm" "$ROOT/stdlib" "$ROOT/jit" "$ROOT/gpu" "$ROOT/api" 2>/dev/null |
       grep -v '^[^:]*/stdlib/os\.c:')
[ -z "$hits" ] || bad "getenv in the library (only repl/ reads the environment; os.getenv is the scripts'):
$hits"
exit $fail
