#!/usr/bin/env bash
# @cuda.jit(cache=True) (jit/disk_cache.c): the first run compiles and
# writes cache files, the second reads them back (GPY_CACHE_STATS=1 counts
# hits, misses and writes on stderr) with the same results; damaged files
# are ignored and rewritten; a changed global gives a new entry; processes
# sharing the directory in parallel all get right answers; an unusable
# directory only disables the cache. Expected numbers are hand-checked:
# saxpy out[i] = SCALE*2*i + 1, block b of block_sum = 4096*b + 2016.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GPY=${GPY:-$ROOT/build/gpy}
case $GPY in /*) ;; *) GPY=$PWD/$GPY ;; esac # one run below changes directory
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export GPY_DEVICE=cpu
unset GPY_DUMP_PTX GPY_CACHE_DIR
fail() { echo "FAIL: $*"; exit 1; }

cat > "$tmp/prog.gpy" <<'GPY'
import sys
import numpy as np
from numba import cuda

SCALE = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0

@cuda.jit(device=True)
def twice(v):
    return v * 2.0

@cuda.jit(cache=True)
def saxpy(out, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = SCALE * twice(x[i]) + y[i]

@cuda.jit(cache=True)
def block_sum(out, x):
    buf = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.blockIdx.x * 64 + t]
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]

n = 1000
x = np.arange(n, dtype=np.float64)
y = np.ones(n)
out = np.zeros(n)
saxpy[(n + 127) // 128, 128](out, x, y)
print(float(out[0]), float(out[1]), float(out[999]), float(out.sum()))
xs = np.arange(256, dtype=np.float32)
sums = np.zeros(4, dtype=np.float32)
block_sum[4, 64](sums, xs)
print([float(v) for v in sums])
ptx = saxpy.inspect_asm()
print(len(ptx), all(".entry" in t for t in ptx.values()))
GPY

expected3='1.0 7.0 5995.0 2998000.0
[2016.0, 6112.0, 10208.0, 14304.0]
1 True'
expected5='1.0 11.0 9991.0 4996000.0
[2016.0, 6112.0, 10208.0, 14304.0]
1 True'

# run DIR EXPECTED_STDOUT EXPECTED_STATS [ARGS...]
run() {
  local dir=$1 want=$2 stats=$3; shift 3
  local out err
  out=$(GPY_CACHE_DIR="$dir" GPY_CACHE_STATS=1 timeout 120 "$GPY" "$tmp/prog.gpy" "$@" 2>"$tmp/err")
  local status=$?
  err=$(cat "$tmp/err")
  [ $status -eq 0 ] || fail "status $status: $err"
  [ "$out" = "$want" ] || fail "stdout: got '$out', want '$want' (stderr: $err)"
  if [ -n "$stats" ]; then grep -qx "gpy cache: $stats" <<<"$err" || fail "stats: got '$err', want '$stats'"; fi
}
count() { find "$1" -name '*.gpyk' | wc -l; }

c="$tmp/cache"
run "$c" "$expected3" "0 hits, 3 misses, 3 writes"
[ "$(count "$c")" -eq 3 ] || fail "expected 3 cache files, got: $(ls "$c")"
run "$c" "$expected3" "3 hits, 0 misses, 0 writes"
# a global frozen into the code changed: new entries, right numbers, old ones stay
run "$c" "$expected5" "1 hits, 2 misses, 2 writes" 5.0
[ "$(count "$c")" -eq 5 ] || fail "expected 5 cache files, got: $(ls "$c")"
run "$c" "$expected3" "3 hits, 0 misses, 0 writes"

# damaged files: truncated, one flipped payload byte, garbage → misses, rewritten
files=$(find "$c" -name '*.gpyk' | sort)
i=0
for f in $files; do
  case $((i % 3)) in
    0) head -c 40 "$f" > "$f.t" && mv "$f.t" "$f" ;;
    1) sz=$(stat -c %s "$f"); printf 'X' | dd of="$f" bs=1 seek=$((sz - 10)) conv=notrunc status=none ;;
    2) echo "not a cache file" > "$f" ;;
  esac
  i=$((i + 1))
done
run "$c" "$expected3" "0 hits, 3 misses, 3 writes"
run "$c" "$expected3" "3 hits, 0 misses, 0 writes"

# several processes sharing one (empty) directory
p="$tmp/par"
pids=()
for j in 1 2 3 4 5 6; do
  ( GPY_CACHE_DIR="$p" timeout 120 "$GPY" "$tmp/prog.gpy" > "$tmp/par$j.out" 2> "$tmp/par$j.err" ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a parallel run failed: $(cat "$tmp"/par*.err)"; done
for j in 1 2 3 4 5 6; do
  [ "$(cat "$tmp/par$j.out")" = "$expected3" ] || fail "parallel run $j: $(cat "$tmp/par$j.out")"
done
[ "$(ls "$p" | grep -vc '\.gpyk$')" -eq 0 ] || fail "temporary files left behind: $(ls "$p")"
run "$p" "$expected3" "3 hits, 0 misses, 0 writes"

# one function behind several dispatchers in one process: the second load
# of the same entry cannot reuse the object's symbols and loads the IR instead
cat > "$tmp/dup.gpy" <<'GPY'
import numpy as np
from numba import cuda

def k(a, v):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = v + i

k1 = cuda.jit(cache=True)(k)
k2 = cuda.jit(cache=True)(k)
k3 = cuda.jit("void(float64[:], float64)", cache=True)(k)
a = np.zeros(5)
k1[1, 32](a, 1.0)
print(a.tolist())
k2[1, 32](a, 2.0)
print(a.tolist())
k3[1, 32](a, 3)
print(a.tolist())
GPY
dupwant='[1.0, 2.0, 3.0, 4.0, 5.0]
[2.0, 3.0, 4.0, 5.0, 6.0]
[3.0, 4.0, 5.0, 6.0, 7.0]'
for want in "1 hits, 2 misses, 2 writes" "3 hits, 0 misses, 0 writes"; do
  out=$(GPY_CACHE_DIR="$tmp/dup" GPY_CACHE_STATS=1 timeout 120 "$GPY" "$tmp/dup.gpy" 2>"$tmp/err") || fail "dup: $(cat "$tmp/err")"
  [ "$out" = "$dupwant" ] || fail "dup: got '$out'"
  grep -qx "gpy cache: $want" "$tmp/err" || fail "dup stats: got '$(cat "$tmp/err")', want '$want'"
done

# a device function from another file changes: that file's text is in the key
mkdir -p "$tmp/xf"
printf 'from numba import cuda\n\n@cuda.jit(device=True)\ndef g(v):\n    return v * 2.0\n' > "$tmp/xf/devmod.gpy"
cat > "$tmp/xf/main.gpy" <<'GPY'
import numpy as np
from numba import cuda
from devmod import g

@cuda.jit(cache=True)
def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = g(a[i] + 1.0)

a = np.arange(4, dtype=np.float64)
k[1, 32](a)
print(a.tolist())
GPY
xrun() {
  out=$(cd "$tmp/xf" && GPY_CACHE_DIR="$tmp/xfc" GPY_CACHE_STATS=1 timeout 120 "$GPY" main.gpy 2>"$tmp/err") || fail "xf: $(cat "$tmp/err")"
  [ "$out" = "$1" ] || fail "xf: got '$out', want '$1'"
  grep -qx "gpy cache: $2" "$tmp/err" || fail "xf stats: got '$(cat "$tmp/err")', want '$2'"
}
xrun '[2.0, 4.0, 6.0, 8.0]' "0 hits, 1 misses, 1 writes"
xrun '[2.0, 4.0, 6.0, 8.0]' "1 hits, 0 misses, 0 writes"
sed -i 's/2\.0/3.0/' "$tmp/xf/devmod.gpy"
xrun '[3.0, 6.0, 9.0, 12.0]' "0 hits, 1 misses, 1 writes"

# a GPU (the test driver tests/gpu/fake_libcuda.c): the PTX entry is cached;
# the second run loads the cached PTX and makes exactly the same driver calls
lib=$(bash "$ROOT/tests/gpu/build-fake.sh" "$tmp") || fail "building tests/gpu/fake_libcuda.c"
cat > "$tmp/gpu.gpy" <<'GPY'
import numpy as np
from numba import cuda

@cuda.jit(cache=True)
def scale(out, x, f):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * f

x = cuda.to_device(np.arange(3, dtype=np.float32))
out = cuda.device_array(3, dtype=np.float32)
scale[1, 256](out, x, np.float32(2.0))
print(len(scale.inspect_asm()), ".entry" in scale.inspect_asm(scale.signatures[0]))
GPY
for i in 1 2; do
  out=$(env -u GPY_DEVICE GPY_LIBCUDA="$lib" FAKE_CUDA_LOG="$tmp/gpu$i.log" GPY_DEVICE=cuda GPY_CACHE_DIR="$tmp/gpuc" \
        GPY_CACHE_STATS=1 timeout 60 "$GPY" "$tmp/gpu.gpy" 2>"$tmp/err") || fail "gpu run $i: $(cat "$tmp/err")"
  [ "$out" = "1 True" ] || fail "gpu run $i: got '$out'"
  want="0 hits, 1 misses, 1 writes"; [ $i -eq 2 ] && want="1 hits, 0 misses, 0 writes"
  grep -qx "gpy cache: $want" "$tmp/err" || fail "gpu stats $i: got '$(cat "$tmp/err")', want '$want'"
  grep -q '^launch scale' "$tmp/gpu$i.log" || fail "gpu run $i: no launch in the driver log"
  ! grep -q '^violation' "$tmp/gpu$i.log" || fail "gpu run $i: driver contract violations"
done
[ "$(find "$tmp/gpuc" -name '*-ptx.gpyk' | wc -l)" -eq 1 ] || fail "expected one PTX cache file"
diff "$tmp/gpu1.log" "$tmp/gpu2.log" >/dev/null || fail "driver calls differ: $(diff "$tmp/gpu1.log" "$tmp/gpu2.log")"

# no usable directory: the cache is off, the program still runs
run "/dev/null/nodir" "$expected3" "0 hits, 3 misses, 0 writes"
# without GPY_CACHE_DIR: $XDG_CACHE_HOME/gpy
XDG_CACHE_HOME="$tmp/xdg" GPY_CACHE_STATS=1 timeout 120 "$GPY" "$tmp/prog.gpy" > /dev/null 2>&1 || fail "XDG run"
[ "$(count "$tmp/xdg/gpy")" -eq 3 ] || fail "expected 3 cache files under XDG_CACHE_HOME/gpy"
exit 0
